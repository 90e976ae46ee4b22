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

// serveCrash is `tack serve`: a command is a REST call, answered at once
// with a response line; create_session and subscribe open the session's
// event stream, whose events are lines too.
type serveCrash struct {
	p       *rpcProcess // its lines; in is unused
	base    string
	session string
	client  *http.Client
	mu      sync.Mutex
	closed  bool
	stream  chan struct{}   // closed when the event stream ended
	ctx     context.Context // the event stream's; cancelled when the test ends
}

func startServeCrash(t *testing.T, bin string, storeArgs []string, session string) crashProc {
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, storeArgs...)...)
	base := serveProcess(t, cmd)
	ctx, cancel := context.WithCancel(context.Background())
	s := &serveCrash{
		p:    &rpcProcess{t: t, cmd: cmd, lines: make(chan map[string]any, 4096)},
		base: base, session: session, client: &http.Client{Transport: &http.Transport{}},
		ctx: ctx,
	}
	t.Cleanup(func() {
		cancel()
		if s.stream != nil {
			<-s.stream
		}
		s.client.CloseIdleConnections()
	})
	return s
}

func (s *serveCrash) push(m map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.p.lines <- m
	}
}

func (s *serveCrash) do(cmd, id string, fields map[string]any) {
	t := s.p.t
	t.Helper()
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
		s.subscribe(fmt.Sprintf("?since=%v", fields["since"]))
		s.push(map[string]any{"type": "response", "id": id, "cmd": cmd, "ok": true, "data": map[string]any{"events": []any{}}})
		return
	default:
		path += "/" + cmd
	}
	var in io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var data any
	_ = json.Unmarshal(raw, &data)
	s.push(map[string]any{"type": "response", "id": id, "cmd": cmd, "ok": res.StatusCode/100 == 2, "data": data,
		"<raw>": fmt.Sprintf("%s %s: %d %s", method, path, res.StatusCode, bytes.TrimSpace(raw))})
	if cmd == "create_session" && res.StatusCode == http.StatusCreated {
		s.subscribe("")
	}
}

// subscribe opens the event stream; its events become lines.
func (s *serveCrash) subscribe(query string) {
	t := s.p.t
	t.Helper()
	if s.stream != nil {
		t.Fatal("the event stream is open already")
	}
	req, err := http.NewRequest("GET", s.base+"/v1/sessions/"+url.PathEscape(s.session)+"/events"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.client.Do(req.WithContext(s.ctx))
	if err != nil {
		t.Fatalf("event stream: %v", err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		t.Fatalf("event stream: %d", res.StatusCode)
	}
	s.stream = make(chan struct{})
	go func() {
		defer close(s.stream)
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
}

func (s *serveCrash) lines() *rpcProcess { return s.p }

func (s *serveCrash) kill() []map[string]any {
	if err := s.p.cmd.Process.Kill(); err != nil {
		s.p.t.Fatal(err)
	}
	s.p.cmd.Wait()
	if s.stream == nil {
		return nil
	}
	return s.p.rest() // the stream ends with the process
}
