package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRPCStrictInput: over `tack rpc`, each bad line gets its protocol
// error and a message naming what was wrong, a 2 MiB line included, and
// the process goes on with the next line.
func TestRPCStrictInput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	p := startRPC(t, buildTack(t))
	huge := `{"cmd":"list_sessions","id":"huge","x":"` + strings.Repeat("x", 2<<20) + `"}`
	cases := []struct {
		line, code, message string
	}{
		{huge, "bad_request", "line is longer than 1048576 bytes; it was skipped"},
		{`{"cmd":"create_session","id":"1","session":"s","model":"script:demo","bogus":1}`, "bad_request", `unknown field "bogus" in create_session`},
		{`{"cmd":"create_session","id":"2","model":"script:demo","tools":["teleport"]}`, "unknown_tool", `unknown tool "teleport"`},
		{`{"cmd":"create_session","id":"3","model":"script:demo","plugins":[{"name":"loop_detect"}]}`, "bad_request",
			`unknown plugin "loop_detect" (registered: approval, ask_user, large_result_offload, limits, loop_detection)`},
		{`{"cmd":"create_session","id":"4","model":"gpt-nothing"}`, "unknown_model", `unknown model "gpt-nothing"`},
		{`{"cmd":"create_session","id":"5","model":"script:demo","plugins":[{"name":"limits","config":{"max_turn":3}}]}`, "bad_request",
			`plugin "limits": unknown field "max_turn" in config`},
		{`{"cmd":"create_session","id":"6","script":{"turns":[{"text":"hi","delay":5}]}}`, "bad_request",
			`unknown model "script:inline": script: unknown field "delay" in turns[0]`},
		{`{"cmd":"create_session","id":"7","session":"s","model":"script:demo"}`, "", ""},
		{`{"cmd":"abort","id":"8","session":"s","kill_tool":"all"}`, "bad_request", `unknown field "kill_tool" in abort`},
		{`{"cmd":"get_state","id":"9","session":"s"}`, "", ""},
	}
	for _, c := range cases {
		p.send(c.line)
	}
	var resps []map[string]any
	for _, m := range p.until(isResponse("9")) {
		if m["type"] == "response" {
			resps = append(resps, m)
		}
	}
	if len(resps) != len(cases) {
		t.Fatalf("got %d responses, want %d: %v", len(resps), len(cases), tail(resps))
	}
	for i, c := range cases {
		r := resps[i]
		if c.code == "" {
			if r["ok"] != true {
				t.Errorf("line %d: %v", i, r["<raw>"])
			}
			continue
		}
		e, _ := r["error"].(map[string]any)
		if r["ok"] != false || e["code"] != c.code || e["message"] != c.message {
			t.Errorf("line %d: got %v, want %s %q", i, r["<raw>"], c.code, c.message)
		}
	}
}

// TestRPCMaxLineBytesFlag: --max-line-bytes sets the limit and --help
// shows it.
func TestRPCMaxLineBytesFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildTack(t)
	help, _ := exec.Command(bin, "rpc", "--help").CombinedOutput()
	if !strings.Contains(string(help), "-max-line-bytes int") || !strings.Contains(string(help), "(default 1048576)") {
		t.Fatalf("--help does not show --max-line-bytes:\n%s", help)
	}
	if out, err := exec.Command(bin, "rpc", "--max-line-bytes", "0").CombinedOutput(); err == nil || !strings.Contains(string(out), "--max-line-bytes must be positive, not 0") {
		t.Fatalf("--max-line-bytes 0: %v %s", err, out)
	}
	p := startCmd(t, exec.Command(bin, "rpc", "--max-line-bytes", "40"))
	p.send(`{"cmd":"list_sessions","id":"a-longer-id-than-40"}`)
	p.send(`{"cmd":"list_sessions","id":"b"}`)
	r := p.until(isResponse("b"))
	if len(r) != 2 {
		t.Fatalf("got %v", tail(r))
	}
	if e, _ := r[0]["error"].(map[string]any); e["message"] != "line is longer than 40 bytes; it was skipped" {
		t.Fatalf("got %v", r[0]["<raw>"])
	}
}
