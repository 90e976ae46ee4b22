package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tack-run/tack/tools"
)

// Defaults of [Options].
const (
	// DefaultStartTimeout bounds a server's start: the process (or HTTP
	// connection), the MCP handshake and the first tools/list.
	DefaultStartTimeout = 30 * time.Second
	// DefaultMaxCalls is how many calls one server runs at once; more
	// wait for a free slot (or for their context to end).
	DefaultMaxCalls = 8
	// firstBackoff and maxBackoff bound the wait between failed starts.
	firstBackoff = 500 * time.Millisecond
	maxBackoff   = 30 * time.Second
)

// Prefix names all of one server's tools: "mcp:<server>".
const Prefix = "mcp:"

// Options tune a [Manager]; zero values take the defaults.
type Options struct {
	// StartTimeout bounds a server's start (DefaultStartTimeout).
	StartTimeout time.Duration
	// MaxCalls bounds the concurrent calls per server (DefaultMaxCalls).
	MaxCalls int
	// Logger logs starts, exits and restarts; nil logs nothing.
	Logger *zap.Logger
}

// Manager holds the MCP servers of the configuration: one connection (one
// child process) per server, started on first use, shared by every
// session, restarted after it dies, and closed by Close.
type Manager struct {
	servers map[string]*server
	opts    Options

	// base is the context of every start; Close cancels it.
	base   context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	watch  []func(server string)
	closed bool
}

// New returns a Manager of servers; it checks the configuration but starts
// nothing.
func New(servers map[string]ServerConfig, opts Options) (*Manager, error) {
	if err := ValidateAll(servers); err != nil {
		return nil, err
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.MaxCalls <= 0 {
		opts.MaxCalls = DefaultMaxCalls
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	m := &Manager{servers: make(map[string]*server, len(servers)), opts: opts}
	m.base, m.cancel = context.WithCancel(context.Background())
	for name, cfg := range servers {
		m.servers[name] = newServer(m, name, cfg)
	}
	return m, nil
}

// Servers returns the configured server names, sorted.
func (m *Manager) Servers() []string { return slices.Sorted(maps.Keys(m.servers)) }

// IsMCPName reports whether name is one the Manager resolves:
// "mcp:<server>" or "<server>/<tool>".
func IsMCPName(name string) bool {
	return strings.HasPrefix(name, Prefix) || strings.Contains(name, "/")
}

// Resolve returns the tools named by names, which are "<server>/<tool>"
// or "mcp:<server>" (all of that server's tools), starting the servers
// it needs. An unknown server or tool gives an error wrapping
// tools.ErrUnknownTool; a server that cannot start, an error that names
// it. Repeated tools are returned once, in name order.
func (m *Manager) Resolve(ctx context.Context, names []string) ([]tools.Tool, error) {
	byName := map[string]tools.Tool{}
	var unknown []string
	for _, n := range names {
		srv, toolName := split(n)
		s, ok := m.servers[srv]
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		ts, err := s.toolList(ctx)
		if err != nil {
			return nil, err
		}
		if toolName == "" {
			for _, t := range ts {
				byName[t.spec.Name] = t
			}
			continue
		}
		i := slices.IndexFunc(ts, func(t *tool) bool { return t.spec.Name == n })
		if i < 0 {
			unknown = append(unknown, n)
			continue
		}
		byName[n] = ts[i]
	}
	if len(unknown) > 0 {
		q := make([]string, len(unknown))
		for i, n := range unknown {
			q[i] = fmt.Sprintf("%q", n)
		}
		return nil, fmt.Errorf("%w %s", tools.ErrUnknownTool, strings.Join(q, ", "))
	}
	out := make([]tools.Tool, 0, len(byName))
	for _, n := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[n])
	}
	return out, nil
}

// split parses "mcp:<server>" (tool "") or "<server>/<tool>".
func split(name string) (server, tool string) {
	if s, ok := strings.CutPrefix(name, Prefix); ok {
		return s, ""
	}
	server, tool, _ = strings.Cut(name, "/")
	return server, tool
}

// OnToolsChanged registers f to be called, on a goroutine of the
// Manager's, with a server's name after its tool list changed
// (notifications/tools/list_changed, or a restart that brought a
// different list).
func (m *Manager) OnToolsChanged(f func(server string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.watch = append(m.watch, f)
}

// changed tells the watchers that server's tools changed.
func (m *Manager) changed(server string) {
	m.mu.Lock()
	watch := slices.Clone(m.watch)
	m.mu.Unlock()
	for _, f := range watch {
		f(server)
	}
}

// Close shuts every running server down (stdio children get their stdin
// closed, then SIGTERM, then SIGKILL) and waits for them. Calls still
// running get an error result. Close is idempotent.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.cancel()
	m.mu.Unlock()
	var errs []error
	for _, name := range m.Servers() {
		if err := m.servers[name].close(); err != nil {
			errs = append(errs, fmt.Errorf("MCP server %q: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// errClosed is the error of calls and starts after Close.
var errClosed = errors.New("the MCP manager is closed")
