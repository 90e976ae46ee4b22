package http

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tack-run/tack"
)

// TestSubagentSessionOverHTTP: a sub-agent's id holds a slash, which a
// path carries escaped as %2F; the child is its parent's owner's, stored,
// listed, and readable once its parent's call is over (restored from the
// store, since a finished child is unloaded).
func TestSubagentSessionOverHTTP(t *testing.T) {
	dir := t.TempDir()
	child := filepath.Join(dir, "child.json")
	if err := os.WriteFile(child, []byte(`{"turns":[{"text":"There are 42 files."}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st := openSQLite(t, filepath.Join(dir, "tack.db"))
	defer st.Close()
	ts := startWith(t, st, []tack.Option{tack.WithScriptDir(dir)}, WithAuth(testAuth(t)))
	defer ts.stop()
	ts.must("POST", "/v1/sessions", aliceToken, `{"session":"p","tools":["subagent"],"subagents":{"model":"script:child.json"},`+
		`"script":{"turns":[{"tool_calls":[{"name":"subagent","args":{"task":"Count the files."}}]},{"text":"42."}]}}`, 201)
	evs := ts.open("/v1/sessions/p/events", aliceToken, "")
	ts.must("POST", "/v1/sessions/p/prompt", aliceToken, `{"text":"How many files?"}`, 200)
	evs.until("agent_end")
	evs.close()
	if ts.rt.Loaded("p/sub-1") {
		t.Error("the finished child is still loaded")
	}

	want := `{"messages":[{"role":"user","content":"Count the files."},{"role":"assistant","content":"There are 42 files."}]}`
	if got := ts.must("GET", "/v1/sessions/p%2Fsub-1/messages", aliceToken, "", 200); got != want {
		t.Fatalf("the child's messages: %s\nwant %s", got, want)
	}
	if got := ts.must("GET", "/v1/sessions/p%2Fsub-1", aliceToken, "", 200); !strings.Contains(got, `"state":"idle"`) ||
		!strings.Contains(got, `"subagent_usage":null`) {
		t.Fatalf("the child's state: %s", got)
	}
	if got := ts.must("GET", "/v1/sessions/p", aliceToken, "", 200); strings.Contains(got, `"subagent_usage":null`) {
		t.Fatalf("the parent's state shows no sub-agent usage: %s", got)
	}
	r := ts.do("GET", "/v1/sessions/p%2Fsub-1/messages", bobToken, "")
	if r.status != 404 || r.body != `{"error":{"code":"invalid_session","message":"no session \"p/sub-1\""}}` {
		t.Fatalf("bob reads alice's sub-agent: %d %s", r.status, r.body)
	}
	if r := ts.do("GET", "/v1/sessions/p/sub-1/messages", aliceToken, ""); r.status != 404 {
		t.Fatalf("an unescaped slash routed: %d %s", r.status, r.body)
	}
	list := ts.must("GET", "/v1/sessions", aliceToken, "", 200)
	if !strings.Contains(list, `"session":"p/sub-1"`) || !strings.Contains(list, `"session":"p"`) {
		t.Fatalf("alice lists %s", list)
	}
}
