package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tack-run/tack/tools/mcp/mcptest"
)

// TestRPCWithMCPServer runs `tack rpc --config` with server-everything
// under mcp_servers and an OpenAI-compatible model that calls its echo
// tool: the model sees the tool as everything__echo, the session as
// everything/echo, and the result is the server's.
func TestRPCWithMCPServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	everything := mcptest.Everything(t)
	srv := &openAIServer{responses: []func(http.ResponseWriter){
		sse(chunkHead+`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"everything__echo","arguments":"{\"message\":\"pong\"}"}}]},"finish_reason":null}]}`,
			finish("tool_calls")),
		sse(delta("It said pong."), finish("stop")),
	}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	command := make([]string, len(everything))
	for i, a := range everything {
		command[i] = strconv.Quote(a)
	}
	path := filepath.Join(t.TempDir(), "tack.json")
	cfg := `{"default_model":"local/m1","providers":{"local":{"base_url":"` + hs.URL + `/v1","models":["m1"]}},
		"mcp_servers":{"everything":{"command":[` + strings.Join(command, ",") + `]}}}`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startCmd(t, exec.Command(buildTack(t), "rpc", "--config", path))
	p.send(`{"cmd":"create_session","id":"c","session":"s","tools":["mcp:everything"]}`)
	if r := p.until(isResponse("c")); r[len(r)-1]["ok"] != true {
		t.Fatalf("create_session: %v", r[len(r)-1])
	}
	p.send(`{"cmd":"prompt","session":"s","text":"ping"}`)
	lines := p.until(isType("agent_end"))
	var ends []string
	for _, m := range lines {
		if m["type"] == "tool_execution_end" {
			ends = append(ends, m["name"].(string)+" "+m["result"].(string))
		}
	}
	if want := []string{"everything/echo Echo: pong"}; !slices.Equal(ends, want) {
		t.Errorf("tool_execution_end = %q, want %q", ends, want)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	var offered []string
	for _, tl := range srv.bodies[0]["tools"].([]any) {
		offered = append(offered, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	if !slices.Contains(offered, "everything__echo") || slices.ContainsFunc(offered, func(n string) bool { return strings.Contains(n, "/") }) {
		t.Errorf("tools offered to the model = %v, want everything__echo and no '/'", offered)
	}
	msgs := srv.bodies[1]["messages"].([]any)
	call := dig(msgs[len(msgs)-2].(map[string]any), "tool_calls")
	if name := call.([]any)[0].(map[string]any)["function"].(map[string]any)["name"]; name != "everything__echo" {
		t.Errorf("the history's call was sent as %v, want everything__echo", name)
	}
}
