package http

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/builtin"
	"github.com/tack-run/tack/server/auth"
	"github.com/tack-run/tack/store"
)

// Static tokens of the tests' users.
const (
	aliceToken = "tk_alice"
	bobToken   = "tk_bob"
	jwtSecret  = "test-secret"
)

// testAuth knows alice and bob by static token, and JWTs signed with
// jwtSecret for issuer https://id.example and audience tack.
func testAuth(t *testing.T) *auth.Authenticator {
	t.Helper()
	a, err := auth.New(auth.File{
		Tokens: map[string]string{aliceToken: "alice", bobToken: "bob"},
		JWT:    &auth.JWTConfig{HS256SecretEnv: "S", Issuer: "https://id.example", Audience: "tack"},
	}, func(string) string { return jwtSecret })
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// refuse is a plugin that rejects every steering message.
type refuse struct{}

func (refuse) Name() string          { return "refuse" }
func (refuse) Priority() int         { return 1 }
func (refuse) Hooks() []plugins.Hook { return []plugins.Hook{plugins.BeforeSteering} }
func (refuse) Handle(*plugins.Event) []plugins.Action {
	return []plugins.Action{{Kind: plugins.Reject, Reason: "no steering here"}}
}

// testServer is a running server on a loopback port.
type testServer struct {
	t    testing.TB
	rt   *tack.Runtime
	srv  *Server
	url  string
	stop func()
	// client sends the requests of do and open: http.DefaultClient unless
	// a test sets another.
	client *http.Client
}

// start runs a server for a new runtime (with st when not nil) until the
// test ends.
func start(t testing.TB, st store.Store, opts ...Option) *testServer {
	t.Helper()
	return startWith(t, st, nil, opts...)
}

// startWith is start with more runtime options.
func startWith(t testing.TB, st store.Store, more []tack.Option, opts ...Option) *testServer {
	t.Helper()
	reg := plugins.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		t.Fatal(err)
	}
	rtOpts := []tack.Option{tack.WithPluginRegistry(reg), tack.WithSteeringLimit(1),
		tack.WithPlugins("refuse", func(json.RawMessage) (plugins.Plugin, error) { return refuse{}, nil })}
	rtOpts = append(rtOpts, more...)
	if st != nil {
		rtOpts = append(rtOpts, tack.WithStore(st), tack.WithNode("test"))
	}
	rt, err := tack.New(rtOpts...)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{t: t, rt: rt, srv: New(rt, opts...), url: "http://" + ln.Addr().String(),
		client: http.DefaultClient}
	done := make(chan error, 1)
	go func() { done <- ts.srv.Serve(ctx, ln) }()
	stopped := false
	ts.stop = func() {
		if stopped {
			return
		}
		stopped = true
		// A connection a client dialled but never sent a request on
		// holds a graceful shutdown for 5 s (the MCP SDK's client leaves
		// such spares): close them first.
		ts.client.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		rt.Close()
	}
	t.Cleanup(ts.stop)
	return ts
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   string
}

// do sends a request with token (none when empty) and reads the answer.
func (ts *testServer) do(method, path, token, body string) response {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.url+path, strings.NewReader(body))
	if err != nil {
		ts.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := ts.client.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: strings.TrimSpace(string(b))}
}

// must sends a request that must answer status, and returns its body.
func (ts *testServer) must(method, path, token, body string, status int) string {
	ts.t.Helper()
	r := ts.do(method, path, token, body)
	if r.status != status {
		ts.t.Fatalf("%s %s: %d %s, want %d", method, path, r.status, r.body, status)
	}
	return r.body
}

// waitState polls get_state until the session is in state.
func (ts *testServer) waitState(path, token, state string) map[string]any {
	ts.t.Helper()
	return eventually.Value(ts.t, 5*time.Second, func() (map[string]any, error) {
		var st map[string]any
		_ = json.Unmarshal([]byte(ts.must("GET", path, token, "", 200)), &st)
		if st["state"] != state || state == "idle" && st["run_id"] != nil {
			return nil, fmt.Errorf("%s stayed %v, want %s", path, st["state"], state)
		}
		return st, nil
	})
}

// stream is an open event stream.
type stream struct {
	t    testing.TB
	res  *http.Response
	r    *bufio.Reader
	stop context.CancelFunc
}

// sseMsg is one message of an event stream: a comment or an event.
type sseMsg struct {
	comment, id, event, data string
}

// open starts an event stream with the given query and Last-Event-ID.
func (ts *testServer) open(path, token, lastID string) *stream {
	ts.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.url+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := ts.client.Do(req)
	if err != nil {
		cancel()
		ts.t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		ts.t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	s := &stream{t: ts.t, res: res, r: bufio.NewReader(res.Body), stop: cancel}
	ts.t.Cleanup(s.close)
	return s
}

func (s *stream) close() {
	s.stop()
	s.res.Body.Close()
}

// next reads the next message; io.EOF when the server ended the stream.
// It does not fail the test, so a reader goroutine may call it.
func (s *stream) next() (sseMsg, error) {
	var m sseMsg
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if line == "" && errors.Is(err, io.EOF) {
				return m, io.EOF
			}
			return m, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if m != (sseMsg{}) {
				return m, nil
			}
		case strings.HasPrefix(line, ": "):
			return sseMsg{comment: line[2:]}, nil
		case strings.HasPrefix(line, "id: "):
			m.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			m.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			m.data = line[6:]
		default:
			return m, fmt.Errorf("unexpected stream line %q", line)
		}
	}
}

// event reads messages up to the next event, skipping comments.
func (s *stream) event() sseMsg {
	s.t.Helper()
	for {
		m, err := s.next()
		if err != nil {
			s.t.Fatalf("stream: %v", err)
		}
		if m.comment == "" {
			return m
		}
	}
}

// until reads events until one of type typ, and returns them all.
func (s *stream) until(typ string) []sseMsg {
	s.t.Helper()
	var out []sseMsg
	for {
		m := s.event()
		out = append(out, m)
		if m.event == typ {
			return out
		}
	}
}
