package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// crashTransport is how the crash matrix talks to a tack process: `tack
// rpc` over its standard streams, or `tack serve` over REST and an event
// stream. Either way the case sees what `tack rpc` prints: the session's
// events and a response line per command.
type crashTransport struct {
	name  string
	start func(t *testing.T, bin string, storeArgs []string, session string) crashProc
}

// crashProc is one running tack process of a crash case.
type crashProc interface {
	// do sends command cmd, numbered id, on the session with fields; its
	// response comes out among the lines as {"type":"response","id":id,...}.
	do(cmd, id string, fields map[string]any)
	// lines is what the process printed: events and responses.
	lines() *rpcProcess
	// kill kills the process with SIGKILL and returns the lines it printed
	// that were not read yet.
	kill() []map[string]any
}

var crashTransports = []crashTransport{
	{"rpc", startRPCCrash},
	{"serve", startServeCrash},
}

// rpcCrash is `tack rpc`: a command is one JSON line.
type rpcCrash struct {
	p       *rpcProcess
	session string
}

func startRPCCrash(t *testing.T, bin string, storeArgs []string, session string) crashProc {
	return &rpcCrash{startCmd(t, exec.Command(bin, append([]string{"rpc"}, storeArgs...)...)), session}
}

func (c *rpcCrash) do(cmd, id string, fields map[string]any) {
	line := map[string]any{"cmd": cmd, "id": id, "session": c.session}
	for k, v := range fields {
		line[k] = v
	}
	b, err := json.Marshal(line)
	if err != nil {
		c.p.t.Fatal(err)
	}
	c.p.send(string(b))
}

func (c *rpcCrash) lines() *rpcProcess { return c.p }

func (c *rpcCrash) kill() []map[string]any {
	if err := c.p.cmd.Process.Kill(); err != nil { // kill -9: no clean-up at all
		c.p.t.Fatal(err)
	}
	c.p.cmd.Wait()
	return c.p.rest() // what was in the pipe was printed
}

// serveCrash is `tack serve`: a command is a REST call, made in order by
// one goroutine so that do does not wait, like a line written to `tack
// rpc`; its answer becomes a response line, none when the process died
// first. create_session and subscribe open the session's event stream,
// whose events are lines too.
type serveCrash struct {
	p       *rpcProcess // its lines; in is unused
	base    string
	session string
	client  *http.Client
	ctx     context.Context // cancelled when the test ends
	calls   chan func()     // the commands not made yet
	mu      sync.Mutex
	closed  bool          // lines is closed
	stream  chan struct{} // closed when the event stream ended; nil before it opened
}

func startServeCrash(t *testing.T, bin string, storeArgs []string, session string) crashProc {
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, storeArgs...)...)
	base := serveProcess(t, cmd)
	ctx, cancel := context.WithCancel(context.Background())
	s := &serveCrash{
		p:    &rpcProcess{t: t, cmd: cmd, lines: make(chan map[string]any, 4096)},
		base: base, session: session, client: &http.Client{Transport: &http.Transport{}},
		ctx: ctx, calls: make(chan func(), 64),
	}
	worker := make(chan struct{})
	go func() {
		defer close(worker)
		for call := range s.calls {
			call()
		}
	}()
	t.Cleanup(func() {
		cancel()
		close(s.calls)
		<-worker
		s.mu.Lock()
		stream := s.stream
		s.mu.Unlock()
		if stream != nil {
			<-stream
		}
		s.client.CloseIdleConnections()
	})
	return s
}

// push adds a line unless the event stream ended (the process is gone).
func (s *serveCrash) push(m map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.p.lines <- m
	}
}

func (s *serveCrash) do(cmd, id string, fields map[string]any) {
	path := "/v1/sessions/" + url.PathEscape(s.session)
	method, body := "POST", fields
	switch cmd {
	case "create_session":
		path, body = "/v1/sessions", map[string]any{"session": s.session}
		for k, v := range fields {
			body[k] = v
		}
	case "get_state":
		method, body = "GET", nil
	case "get_messages":
		method, body = "GET", nil
		path += "/messages"
		if fields["all"] == true {
			path += "?all=true"
		}
	case "subscribe":
		s.calls <- func() {
			if err := s.subscribe(fmt.Sprintf("?since=%v", fields["since"])); err != nil {
				s.push(map[string]any{"type": "response", "id": id, "cmd": cmd, "ok": false, "<raw>": err.Error()})
				return
			}
			s.push(map[string]any{"type": "response", "id": id, "cmd": cmd, "ok": true, "data": map[string]any{"events": []any{}}})
		}
		return
	default:
		path += "/" + cmd
	}
	var in []byte
	if body != nil {
		var err error
		if in, err = json.Marshal(body); err != nil {
			s.p.t.Fatal(err)
		}
	}
	s.calls <- func() {
		m := map[string]any{"type": "response", "id": id, "cmd": cmd}
		req, err := http.NewRequestWithContext(s.ctx, method, s.base+path, bytes.NewReader(in))
		if err != nil {
			panic(err)
		}
		res, err := s.client.Do(req)
		if err != nil {
			// The process died with the command in flight: no answer,
			// as `tack rpc` prints none.
			return
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var data any
		_ = json.Unmarshal(raw, &data)
		m["ok"], m["data"] = res.StatusCode/100 == 2, data
		m["<raw>"] = fmt.Sprintf("%s %s: %d %s", method, path, res.StatusCode, bytes.TrimSpace(raw))
		if cmd == "create_session" && res.StatusCode == http.StatusCreated {
			if err := s.subscribe(""); err != nil {
				m["ok"], m["<raw>"] = false, err.Error()
			}
		}
		s.push(m)
	}
}

// subscribe opens the event stream; its events become lines, and lines is
// closed when it ends.
func (s *serveCrash) subscribe(query string) error {
	if s.stream != nil {
		return fmt.Errorf("the event stream is open already")
	}
	req, err := http.NewRequestWithContext(s.ctx, "GET", s.base+"/v1/sessions/"+url.PathEscape(s.session)+"/events"+query, nil)
	if err != nil {
		return err
	}
	res, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("event stream: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return fmt.Errorf("event stream: %d", res.StatusCode)
	}
	stream := make(chan struct{})
	s.mu.Lock()
	s.stream = stream
	s.mu.Unlock()
	go func() {
		defer close(stream)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(data), &m); err != nil {
				m = map[string]any{"type": "<text>", "line": data}
			}
			m["<raw>"] = data
			s.push(m)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.closed = true
		close(s.p.lines)
	}()
	return nil
}

func (s *serveCrash) lines() *rpcProcess { return s.p }

func (s *serveCrash) kill() []map[string]any {
	if err := s.p.cmd.Process.Kill(); err != nil {
		s.p.t.Fatal(err)
	}
	s.p.cmd.Wait()
	s.mu.Lock()
	stream := s.stream
	s.mu.Unlock()
	if stream == nil {
		return nil
	}
	return s.p.rest() // the stream ends with the process
}
