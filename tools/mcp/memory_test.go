package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/mcp"
	"github.com/tack-run/tack/tools/mcp/mcptest"
)

// memory starts a Manager with srv as "mem".
func memory(t *testing.T, srv *sdk.Server, opts mcp.Options) *mcp.Manager {
	t.Helper()
	m, err := mcp.New(map[string]mcp.ServerConfig{"mem": mcptest.InMemory(srv)}, opts)
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

// answer is a tool handler that answers res.
func answer(res *sdk.CallToolResult) sdk.ToolHandler {
	return func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return res, nil }
}

var objectSchema = json.RawMessage(`{"type":"object"}`)

// TestResults: each kind of content, isError, a protocol error and a
// result past MaxResult.
func TestResults(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "mem"}, nil)
	size := int64(3)
	srv.AddTool(&sdk.Tool{Name: "mixed", InputSchema: objectSchema}, answer(&sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: "text"},
		&sdk.ImageContent{Data: []byte("abcd"), MIMEType: "image/png"},
		&sdk.AudioContent{Data: []byte("ab"), MIMEType: "audio/wav"},
		&sdk.ResourceLink{URI: "file:///srv/a.txt", Name: "a.txt", Size: &size},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///srv/b.txt", MIMEType: "text/plain", Text: "B"}},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///srv/c.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2}}},
	}}))
	srv.AddTool(&sdk.Tool{Name: "structured", InputSchema: objectSchema}, answer(&sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]any{"n": 1}}))
	srv.AddTool(&sdk.Tool{Name: "fails", InputSchema: objectSchema}, answer(&sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "disk full"}}}))
	huge := strings.Repeat("h", mcp.MaxResult) + strings.Repeat("m", mcp.MaxResult) + strings.Repeat("t", mcp.MaxResult)
	srv.AddTool(&sdk.Tool{Name: "huge", InputSchema: objectSchema}, answer(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: huge}}}))
	m := memory(t, srv, mcp.Options{})

	tests := []struct {
		tool string
		want tools.Result
	}{
		{"mem/mixed", tools.Result{Content: "text\n[image: image/png, 4 bytes, not shown]\n[audio: audio/wav, 2 bytes, not played]\n" +
			"[resource link: file:///srv/a.txt (a.txt)]\n[resource file:///srv/b.txt]\nB\n[resource file:///srv/c.bin: application/octet-stream, 2 bytes, not shown]"}},
		{"mem/structured", tools.Result{Content: `{"n":1}`}},
		{"mem/fails", tools.Result{Content: "disk full", IsError: true}},
		// A server's answer goes into the history, which every later
		// request sends: its middle is cut past MaxResult.
		{"mem/huge", tools.Result{Content: strings.Repeat("h", mcp.MaxResult/2) + fmt.Sprintf("\n[output truncated: %d bytes]\n", 2*mcp.MaxResult) + strings.Repeat("t", mcp.MaxResult/2)}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			if res, _ := run(t, get(t, m, tt.tool), `{}`); res != tt.want {
				t.Errorf("result = %+v, want %+v", res, tt.want)
			}
		})
	}
	t.Run("removed on the server", func(t *testing.T) {
		gone := get(t, m, "mem/fails")
		srv.RemoveTools("fails")
		res, _ := run(t, gone, `{}`)
		if !res.IsError || !strings.HasPrefix(res.Content, `MCP server "mem": `) || !strings.Contains(res.Content, "fails") {
			t.Errorf("result = %+v, want an error naming the server and the tool", res)
		}
	})
}

// TestMaxCalls: with MaxCalls 1, a second call waits for the first; a
// cancelled wait returns at once.
func TestMaxCalls(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "mem"}, nil)
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	srv.AddTool(&sdk.Tool{Name: "block", InputSchema: objectSchema}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
	})
	m := memory(t, srv, mcp.Options{MaxCalls: 1})
	block := get(t, m, "mem/block")

	var wg sync.WaitGroup
	results := make([]tools.Result, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = tools.Execute(context.Background(), block, nil, nil)
		}()
		if i == 0 {
			<-entered
		}
	}
	// The second call waits for a slot: a third, cancelled, gives up.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if res := tools.Execute(ctx, block, nil, nil); res != (tools.Result{Content: "context deadline exceeded", IsError: true}) {
		t.Errorf("a call waiting for a slot past its deadline = %+v", res)
	}
	select {
	case <-entered:
		t.Fatal("a second call ran while the first held the only slot")
	default:
	}
	close(release)
	wg.Wait()
	if want := (tools.Result{Content: "done"}); results[0] != want || results[1] != want {
		t.Errorf("results = %+v, want both %+v", results, want)
	}
}

// TestToolsChanged: list_changed makes the Manager list again and tell
// its watchers; Resolve then gives the new list.
func TestToolsChanged(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "mem"}, nil)
	srv.AddTool(&sdk.Tool{Name: "a", InputSchema: objectSchema}, answer(&sdk.CallToolResult{Content: []sdk.Content{}}))
	m := memory(t, srv, mcp.Options{})
	changed := make(chan string, 4)
	m.OnToolsChanged(func(server string) { changed <- server })
	get(t, m, "mem/a")

	srv.AddTool(&sdk.Tool{Name: "b", Description: "B.", InputSchema: objectSchema}, answer(&sdk.CallToolResult{Content: []sdk.Content{}}))
	select {
	case s := <-changed:
		if s != "mem" {
			t.Errorf("changed %q, want mem", s)
		}
	case <-time.After(wait):
		t.Fatal("no change told")
	}
	ts, err := m.Resolve(context.Background(), []string{"mcp:mem"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range ts {
		names = append(names, tl.Spec().Name)
	}
	if !slices.Equal(names, []string{"mem/a", "mem/b"}) || ts[1].Spec().Description != "B." || ts[1].Spec().Kind != tools.Killable {
		t.Errorf("tools after the change = %v", ts)
	}
}

// TestBadToolName: a server tool whose name cannot be sent to a model is
// left out; the others are offered.
func TestBadToolName(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "mem"}, nil)
	srv.AddTool(&sdk.Tool{Name: "ok", InputSchema: objectSchema}, answer(&sdk.CallToolResult{Content: []sdk.Content{}}))
	srv.AddTool(&sdk.Tool{Name: "has.dot", InputSchema: objectSchema}, answer(&sdk.CallToolResult{Content: []sdk.Content{}}))
	m := memory(t, srv, mcp.Options{})
	ts, err := m.Resolve(context.Background(), []string{"mcp:mem"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].Spec().Name != "mem/ok" {
		t.Errorf("tools = %v, want mem/ok only", ts)
	}
}

// TestErrorsAndProgressAreBounded: what an MCP server answers as a
// protocol error or a tool's error (the call's result then) and what it
// sends as progress are bounded by MaxResult, as its results are.
func TestErrorsAndProgressAreBounded(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "mem"}, nil)
	huge := strings.Repeat("e", 3*mcp.MaxResult)
	srv.AddTool(&sdk.Tool{Name: "rpcerr", InputSchema: objectSchema}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: -32000, Message: huge}
	})
	srv.AddTool(&sdk.Tool{Name: "plainerr", InputSchema: objectSchema}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return nil, errors.New(huge)
	})
	srv.AddTool(&sdk.Tool{Name: "progress", InputSchema: objectSchema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		for i := range 3 {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Message: huge})
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	})
	m := memory(t, srv, mcp.Options{})
	for _, name := range []string{"mem/rpcerr", "mem/plainerr", "mem/progress"} {
		res, updates := run(t, get(t, m, name), `{}`)
		streamed := 0
		for _, u := range updates {
			streamed += len(u)
		}
		if len(res.Content) > mcp.MaxResult+200 || streamed > mcp.MaxResult+200 {
			t.Errorf("%s: past MaxResult: result %d, updates %d", name, len(res.Content), streamed)
		}
	}
}
