package main

import (
	"fmt"
	"testing"
)

// TestRPCApprovalAndQuestion configures the approval and ask_user plugins
// through create_session and answers both over JSON lines.
func TestRPCApprovalAndQuestion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	p := startRPC(t, buildTack(t))
	p.send(`{"cmd":"create_session","id":"c","session":"s","plugins":[{"name":"approval","config":{"tools":["shell"],"safe_commands":["ls"]}},{"name":"ask_user"}],` +
		`"script":{"turns":[{"tool_calls":[{"name":"shell","args":{"command":"echo approved"}}]},` +
		`{"tool_calls":[{"name":"ask_user","args":{"question":"Go on?","options":["yes","no"]}}]},{"text":"Finished."}]}}`)
	if r := p.until(isResponse("c")); r[len(r)-1]["ok"] != true {
		t.Fatalf("create_session: %v", r[len(r)-1])
	}
	p.send(`{"cmd":"prompt","session":"s","text":"work"}`)
	req := last(p.until(isType("approval_required")))
	if req["tool"] != "shell" || fmt.Sprint(req["args"]) != "map[command:echo approved]" {
		t.Fatalf("approval_required %v", req)
	}
	p.until(func(m map[string]any) bool { return m["type"] == "state_changed" && m["to"] == "idle" })
	p.send(`{"cmd":"get_state","id":"gs","session":"s"}`)
	st := last(p.until(isResponse("gs")))["data"].(map[string]any)
	if pa := st["pending_approvals"].([]any); len(pa) != 1 || pa[0].(map[string]any)["approval_id"] != req["approval_id"] {
		t.Fatalf("pending_approvals %v", st["pending_approvals"])
	}
	p.send(`{"cmd":"approve","id":"ap","session":"s","approval_id":"` + fmt.Sprint(req["approval_id"]) + `"}`)
	q := last(p.until(isType("ask_user")))
	p.until(func(m map[string]any) bool { return m["type"] == "state_changed" && m["to"] == "idle" })
	p.send(`{"cmd":"respond","id":"r","session":"s","ref":"` + fmt.Sprint(q["ref"]) + `","response":"yes"}`)
	end := last(p.until(isType("agent_end")))
	if end["reason"] != "completed" {
		t.Fatalf("agent_end %v", end)
	}
	p.send(`{"cmd":"get_messages","id":"gm","session":"s"}`)
	msgs := last(p.until(isResponse("gm")))["data"].(map[string]any)["messages"].([]any)
	if len(msgs) != 6 || msgs[2].(map[string]any)["content"] != "approved\n" || msgs[4].(map[string]any)["content"] != "yes" {
		t.Fatalf("history %v", msgs)
	}
}

func last(ms []map[string]any) map[string]any { return ms[len(ms)-1] }
