package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/mcp"
	"github.com/tack-run/tack/tools/mcp/mcptest"
)

// wait bounds what the tests wait for; starting node takes a second or so.
const wait = 30 * time.Second

// everything starts a Manager with server-everything as "everything".
func everything(t *testing.T) *mcp.Manager {
	t.Helper()
	m, err := mcp.New(map[string]mcp.ServerConfig{"everything": {Command: mcptest.Everything(t)}}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

// get resolves one tool by name.
func get(t *testing.T, m *mcp.Manager, name string) tools.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ts, err := m.Resolve(ctx, []string{name})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].Spec().Name != name {
		t.Fatalf("Resolve(%q) = %v", name, ts)
	}
	return ts[0]
}

// run calls t through tools.Execute, collecting its updates.
func run(t *testing.T, tl tools.Tool, args string) (tools.Result, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var mu sync.Mutex
	var updates []string
	res := tools.Execute(ctx, tl, json.RawMessage(args), func(s string) {
		mu.Lock()
		defer mu.Unlock()
		updates = append(updates, s)
	})
	mu.Lock()
	defer mu.Unlock()
	return res, updates
}

// TestEverything runs server-everything's tools over stdio: the tool
// list, a text result, progress, an image, and an isError result.
func TestEverything(t *testing.T) {
	m := everything(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	all, err := m.Resolve(ctx, []string{"mcp:everything"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range all {
		names = append(names, tl.Spec().Name)
	}
	for _, want := range []string{"everything/echo", "everything/get-sum", "everything/get-tiny-image", "everything/trigger-long-running-operation"} {
		if !slices.Contains(names, want) {
			t.Errorf("mcp:everything = %v, want it to hold %s", names, want)
		}
	}
	set, err := tools.NewSet(all...)
	if err != nil {
		t.Fatalf("the tools do not make a Set: %v", err)
	}
	if err := set.Validate("everything/echo", json.RawMessage(`{"message": 3}`)); err == nil {
		t.Error("echo's schema from the server accepts a number for message")
	}

	t.Run("echo", func(t *testing.T) {
		res, _ := run(t, get(t, m, "everything/echo"), `{"message":"hello"}`)
		if want := (tools.Result{Content: "Echo: hello"}); res != want {
			t.Errorf("echo = %+v, want %+v", res, want)
		}
	})
	t.Run("progress", func(t *testing.T) {
		res, updates := run(t, get(t, m, "everything/trigger-long-running-operation"), `{"duration":0.6,"steps":3}`)
		if want := (tools.Result{Content: "Long running operation completed. Duration: 0.6 seconds, Steps: 3."}); res != want {
			t.Errorf("result = %+v, want %+v", res, want)
		}
		// The SDK handles notifications on goroutines of their own, so the
		// last ones may lose the race with the result (and are then
		// dropped); the first comes 400 ms before it.
		want := []string{"progress 1/3\n", "progress 2/3\n", "progress 3/3\n"}
		if len(updates) == 0 || !slices.Equal(updates, want[:len(updates)]) {
			t.Errorf("updates = %q, want %q or a beginning of it", updates, want)
		}
	})
	t.Run("image", func(t *testing.T) {
		res, _ := run(t, get(t, m, "everything/get-tiny-image"), `{}`)
		lines := strings.Split(res.Content, "\n")
		if res.IsError || len(lines) != 3 || lines[0] != "Here's the image you requested:" ||
			!strings.HasPrefix(lines[1], "[image: image/png, ") || !strings.HasSuffix(lines[1], " bytes, not shown]") ||
			lines[2] != "The image above is the MCP logo." {
			t.Errorf("get-tiny-image = %+v", res)
		}
	})
	t.Run("isError", func(t *testing.T) {
		// Arguments the session would refuse, sent anyway: the server
		// answers with an isError result.
		res, _ := run(t, get(t, m, "everything/get-sum"), `{"a":"one","b":2}`)
		if !res.IsError || !strings.Contains(res.Content, "a") {
			t.Errorf("get-sum with a string = %+v, want an error result", res)
		}
	})
}

// TestEverythingDies kills the server during a call: the call gets an
// error result naming the server, and the next call starts a new process.
func TestEverythingDies(t *testing.T) {
	m := everything(t)
	long := get(t, m, "everything/trigger-long-running-operation")
	first := m.PID("everything")
	if first == 0 {
		t.Fatal("no pid after the start")
	}
	done := make(chan tools.Result, 1)
	started := make(chan struct{})
	var once sync.Once
	go func() {
		done <- tools.Execute(context.Background(), long, json.RawMessage(`{"duration":30,"steps":300}`), func(string) {
			once.Do(func() { close(started) })
		})
	}()
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("no progress from the long-running operation")
	}
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var res tools.Result
	select {
	case res = <-done:
	case <-time.After(wait):
		t.Fatal("the call did not end after its server was killed")
	}
	if !res.IsError || !strings.HasPrefix(res.Content, `MCP server "everything" stopped during the call: `) {
		t.Errorf("result = %+v, want an error saying the server stopped", res)
	}
	res, _ = run(t, get(t, m, "everything/echo"), `{"message":"again"}`)
	if want := (tools.Result{Content: "Echo: again"}); res != want {
		t.Errorf("echo after the restart = %+v, want %+v", res, want)
	}
	if second := m.PID("everything"); second == 0 || second == first {
		t.Errorf("pid after the restart = %d, want a new process (was %d)", second, first)
	}
}

// TestStartFaults: a command that does not exist, one that exits at
// once and one that never answers give errors naming the server.
func TestStartFaults(t *testing.T) {
	tests := []struct {
		name    string
		command []string
		want    []string
	}{
		{"no such program", []string{"/nonexistent/mcp-server"}, []string{`MCP server "bad" did not start: `, "no such file or directory"}},
		{"exits at once", []string{"sh", "-c", "echo cannot open /srv >&2; exit 3"}, []string{`MCP server "bad" did not start: `, "; stderr: cannot open /srv"}},
		{"never answers", []string{"sleep", "60"}, []string{`MCP server "bad" did not start: no answer within 300ms`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := mcp.New(map[string]mcp.ServerConfig{"bad": {Command: tt.command}}, mcp.Options{StartTimeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			_, err = m.Resolve(context.Background(), []string{"mcp:bad"})
			if err == nil {
				t.Fatal("Resolve succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not hold %q", err, w)
				}
			}
			// Within the backoff, the next use fails at once with the same error.
			_, again := m.Resolve(context.Background(), []string{"bad/x"})
			if again == nil || !strings.HasPrefix(again.Error(), err.Error()+"; the next try is in ") {
				t.Errorf("second Resolve = %v, want the first error and the backoff", again)
			}
		})
	}
}

// TestResolveUnknown: unknown servers and tools wrap tools.ErrUnknownTool.
func TestResolveUnknown(t *testing.T) {
	m, err := mcp.New(nil, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, err = m.Resolve(context.Background(), []string{"mcp:nope", "fs/read"})
	if !errors.Is(err, tools.ErrUnknownTool) || err.Error() != `unknown tool "mcp:nope", "fs/read"` {
		t.Errorf("Resolve = %v", err)
	}
}

// TestEverythingHTTP: the same server over streamable HTTP, with a
// configured header on every request.
func TestEverythingHTTP(t *testing.T) {
	target, err := url.Parse(mcptest.EverythingHTTP(t))
	if err != nil {
		t.Fatal(err)
	}
	// A proxy in front of the server counts the requests without the header.
	var missing atomic.Int32
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Tack-Test") != "1" {
			missing.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	m, err := mcp.New(map[string]mcp.ServerConfig{"web": {URL: front.URL + "/mcp", Headers: map[string]string{"X-Tack-Test": "1"}}}, mcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	res, _ := run(t, get(t, m, "web/echo"), `{"message":"over http"}`)
	if want := (tools.Result{Content: "Echo: over http"}); res != want {
		t.Errorf("echo = %+v, want %+v", res, want)
	}
	res, updates := run(t, get(t, m, "web/trigger-long-running-operation"), `{"duration":0.6,"steps":2}`)
	if res.IsError || len(updates) == 0 || updates[0] != "progress 1/2\n" {
		t.Errorf("long-running = %+v with updates %q", res, updates)
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if n := missing.Load(); n != 0 {
		t.Errorf("%d requests came without the configured header", n)
	}
}
