package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tack-run/tack/store/postgres/pgtest"
)

// crashScript: a batch with a long tool (in flight at the crash) and a
// shell command held for approval.
const crashScript = `{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":60000}},{"name":"shell","args":{"command":"echo approved"}}]}]}`

// crashAndRecover runs tack rpc on a store, crashes it (kill -9) with a
// tool in flight, a queued prompt and a pending approval, then starts it
// again on the same store and checks that everything came back.
func crashAndRecover(t *testing.T, bin string, args ...string) {
	first := startCmd(t, exec.Command(bin, append([]string{"rpc"}, args...)...))
	first.send(`{"cmd":"create_session","id":"c","session":"s","plugins":[{"name":"approval"}],"script":` + crashScript + `}`)
	first.until(isResponse("c"))
	first.send(`{"cmd":"prompt","session":"s","text":"go"}`)
	first.until(isType("approval_required"))
	first.send(`{"cmd":"prompt","id":"q","session":"s","text":"later"}`)
	if r := last(first.until(isResponse("q"))); dig(r, "data", "queued") != true {
		t.Fatalf("queued prompt: %v", r)
	}
	if err := first.cmd.Process.Kill(); err != nil { // kill -9: no clean-up at all
		t.Fatal(err)
	}
	first.cmd.Wait()

	second := startCmd(t, exec.Command(bin, append([]string{"rpc"}, args...)...))
	second.send(`{"cmd":"get_state","id":"gs","session":"s"}`)
	before := second.until(isResponse("gs")) // restored by get_state: agent_recovered comes first
	st := last(before)["data"].(map[string]any)
	if fmt.Sprint(st["prompt_queue"]) != "[later]" || len(st["pending_approvals"].([]any)) != 1 {
		t.Fatalf("stored state after the crash: %v", st)
	}
	second.send(`{"cmd":"approve","id":"ap","session":"s","approval_id":"ap-1"}`)
	lines := append(before, second.until(func(m map[string]any) bool { return m["type"] == "request_start" })...)
	var rec map[string]any
	for _, m := range lines {
		if m["type"] == "agent_recovered" {
			rec = m
		}
	}
	if rec == nil || rec["from_state"] != "executing_tools" || rec["interrupted_calls"] != 1.0 || rec["run_id"] != "r-1" || rec["resumed"] != true {
		t.Fatalf("agent_recovered: %v", rec)
	}
	second.send(`{"cmd":"abort","id":"ab","session":"s"}`)
	second.until(isType("agent_end"))
	second.send(`{"cmd":"get_messages","id":"gm","session":"s"}`)
	msgs := last(second.until(isResponse("gm")))["data"].(map[string]any)["messages"].([]any)
	var got []string
	for _, m := range msgs[:4] {
		m := m.(map[string]any)
		got = append(got, fmt.Sprintf("%v:%v", m["role"], m["content"]))
	}
	want := "user:go|assistant:|tool:interrupted: process restarted|tool:approved\n"
	if strings.Join(got, "|") != want {
		t.Fatalf("history after recovery:\n got %q\nwant %q", strings.Join(got, "|"), want)
	}
	second.send(`{"cmd":"get_state","id":"gs2","session":"s"}`)
	if st := last(second.until(isResponse("gs2")))["data"].(map[string]any); fmt.Sprint(st["prompt_queue"]) != "[later]" {
		t.Fatalf("the queued prompt is gone: %v", st)
	}
}

func TestCrashRecoverySQLite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	crashAndRecover(t, buildTack(t), "--store", "sqlite:"+filepath.Join(t.TempDir(), "tack.db"))
}

func TestCrashRecoveryPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dsn := pgtest.DSN(t)
	crashAndRecover(t, buildTack(t), "--store", dsn, "--node", "node-a")
}

// TestOneOwnerPerSession: a second node cannot take a session another
// node holds; it answers not_alive rather than running it twice.
func TestOneOwnerPerSession(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dsn, bin := pgtest.DSN(t), buildTack(t)
	a := startCmd(t, exec.Command(bin, "rpc", "--store", dsn, "--node", "a"))
	a.send(`{"cmd":"create_session","id":"c","session":"s","script":{"turns":[{"text":"hi"}]}}`)
	a.until(isResponse("c"))
	b := startCmd(t, exec.Command(bin, "rpc", "--store", dsn, "--node", "b", "--lease-ttl", "1m"))
	b.send(`{"cmd":"prompt","id":"p","session":"s","text":"mine now?"}`)
	r := last(b.until(isResponse("p")))
	if r["ok"] != false || dig(r, "error", "code") != "not_alive" {
		t.Fatalf("second node: %v", r)
	}
	a.send(`{"cmd":"prompt","id":"p","session":"s","text":"still mine"}`)
	if r := last(a.until(isResponse("p"))); r["ok"] != true {
		t.Fatalf("owner: %v", r)
	}
}
