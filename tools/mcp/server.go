package mcp

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/tack-run/tack/tools"
)

// terminateAfter is how long a stdio server gets to exit after its stdin
// is closed before it is sent SIGTERM (and as long again before SIGKILL).
const terminateAfter = time.Second

// server is one configured MCP server and its current connection.
type server struct {
	m    *Manager
	name string
	cfg  ServerConfig
	// sem holds one token per running call (Options.MaxCalls).
	sem chan struct{}
	// progress maps the progress token of each running call to its
	// update function.
	progress sync.Map
	tokens   atomic.Uint64
	// wg counts the goroutines of the server: starts, exit watchers and
	// list refreshes. close waits for them.
	wg sync.WaitGroup

	mu       sync.Mutex
	closed   bool          // set by close: no goroutine starts after it
	conn     *conn         // the live connection, nil when none
	starting chan struct{} // closed when the start under way ends
	lastErr  error         // why the last start failed
	failures int           // failed starts in a row
	retryAt  time.Time     // no start before then (backoff)
}

// conn is one connection to a server (one run of its process).
type conn struct {
	cs    *sdk.ClientSession
	pid   int // the stdio child's pid; 0 for other transports
	tools []*tool
	// refreshed is set once a list_changed has listed the tools again.
	refreshed bool
	done      chan struct{} // closed when the connection has ended
}

func newServer(m *Manager, name string, cfg ServerConfig) *server {
	return &server{m: m, name: name, cfg: cfg, sem: make(chan struct{}, m.opts.MaxCalls)}
}

// session returns the live connection, starting the server when there is
// none. A caller whose ctx ends stops waiting; the start goes on for the
// next caller. After a failed start, further starts wait out a backoff
// (0.5 s doubling to 30 s) and meanwhile fail at once with the last error.
func (s *server) session(ctx context.Context) (*conn, error) {
	for {
		s.mu.Lock()
		switch {
		case s.closed:
			s.mu.Unlock()
			return nil, errClosed
		case s.conn != nil:
			c := s.conn
			s.mu.Unlock()
			return c, nil
		case s.starting == nil && time.Now().Before(s.retryAt):
			err := fmt.Errorf("%w; the next try is in %s", s.lastErr, time.Until(s.retryAt).Round(100*time.Millisecond))
			s.mu.Unlock()
			return nil, err
		case s.starting == nil:
			s.starting = make(chan struct{})
			s.wg.Add(1)
			go s.start(s.starting)
		}
		wait := s.starting
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		s.mu.Lock()
		c, err := s.conn, s.lastErr
		s.mu.Unlock()
		if c == nil && err != nil {
			return nil, err
		}
	}
}

// start connects to the server, lists its tools and records the outcome,
// then closes done.
func (s *server) start(done chan struct{}) {
	defer s.wg.Done()
	c, err := s.connect()
	s.mu.Lock()
	defer s.mu.Unlock()
	defer close(done)
	s.starting = nil
	if err == nil && s.closed {
		_ = c.cs.Close()
		err = errClosed
	}
	if err != nil {
		s.failures++
		s.lastErr = err
		s.retryAt = time.Now().Add(min(firstBackoff<<min(s.failures-1, 10), maxBackoff))
		s.m.opts.Logger.Warn("MCP server did not start", zap.String("server", s.name), zap.Error(err))
		return
	}
	s.failures, s.lastErr, s.retryAt = 0, nil, time.Time{}
	s.conn = c
	s.m.opts.Logger.Info("MCP server started", zap.String("server", s.name), zap.Int("pid", c.pid), zap.Int("tools", len(c.tools)))
	s.wg.Add(1)
	go s.watch(c)
}

// connect makes one connection within the start timeout.
func (s *server) connect() (*conn, error) {
	ctx, cancel := context.WithTimeout(s.m.base, s.m.opts.StartTimeout)
	defer cancel()
	t, cmd, stderr, err := s.transport(ctx)
	if err != nil {
		return nil, fmt.Errorf("MCP server %q did not start: %w", s.name, err)
	}
	c := &conn{done: make(chan struct{})}
	client := sdk.NewClient(&sdk.Implementation{Name: "tack", Version: "1"}, &sdk.ClientOptions{
		Capabilities:                &sdk.ClientCapabilities{},
		ProgressNotificationHandler: s.onProgress,
		ToolListChangedHandler:      func(_ context.Context, r *sdk.ToolListChangedRequest) { s.refresh(c, r.Session) },
	})
	c.cs, err = client.Connect(ctx, t, nil)
	if err == nil {
		var ts []*tool
		if ts, err = s.list(ctx, c.cs); err != nil {
			_ = c.cs.Close()
		}
		s.mu.Lock()
		if !c.refreshed { // a list_changed during the start listed newer tools
			c.tools = ts
		}
		s.mu.Unlock()
	}
	if err != nil {
		if ctx.Err() != nil && s.m.base.Err() == nil {
			err = fmt.Errorf("no answer within %s (%w)", s.m.opts.StartTimeout, err)
		}
		return nil, fmt.Errorf("MCP server %q did not start: %w%s", s.name, err, stderr.text())
	}
	if cmd != nil {
		c.pid = cmd.Process.Pid
	}
	return c, nil
}

// transport makes the transport of one connection; for a command, it
// also returns the command and the tail of its stderr.
func (s *server) transport(ctx context.Context) (sdk.Transport, *exec.Cmd, *tail, error) {
	switch {
	case s.cfg.Dial != nil:
		t, err := s.cfg.Dial(ctx)
		return t, nil, nil, err
	case s.cfg.URL != "":
		hc := &http.Client{Transport: headers{base: http.DefaultTransport, set: s.cfg.Headers}}
		return &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc}, nil, nil, nil
	}
	cmd := exec.Command(s.cfg.Command[0], s.cfg.Command[1:]...)
	cmd.Env = os.Environ()
	for _, k := range slices.Sorted(maps.Keys(s.cfg.Env)) {
		cmd.Env = append(cmd.Env, k+"="+s.cfg.Env[k])
	}
	stderr := &tail{}
	cmd.Stderr = stderr
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: terminateAfter}, cmd, stderr, nil
}

// drop forgets c, if it is still the live connection, and closes it.
func (s *server) drop(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == c {
		s.conn = nil
	}
	if s.closed {
		return // close took the live connection and closes it
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = c.cs.Close()
	}()
}

// goroutine counts one more goroutine of the server in wg, unless close
// has begun (it reports false then, and no goroutine may start).
func (s *server) goroutine() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

// close ends the connection and waits for the server's goroutines.
func (s *server) close() error {
	s.mu.Lock()
	s.closed = true
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	var err error
	if c != nil {
		err = c.cs.Close()
	}
	s.wg.Wait()
	return err
}

// headers is an http.RoundTripper that sets the configured headers.
type headers struct {
	base http.RoundTripper
	set  map[string]string
}

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.set) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.set {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

var _ tools.Tool = (*tool)(nil)
