package agui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/internal/nodetest"
)

// TestAGUIClient runs testdata/client/agui.test.mjs, which drives this
// handler with the real @ag-ui/client HttpAgent, installed by `npm ci`
// from the committed lockfile. Without Node 20 and npm the test skips,
// except under CI=true, where it fails.
func TestAGUIClient(t *testing.T) {
	n := nodetest.Need(t)
	dir := filepath.Join("testdata", "client")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	n.Install(ctx, t, dir)

	s := newServer(t)
	s.spawn(t, "text", `{"turns":[{"thinking":"Greet back.","text":"Hello from Tack","chunk_size":5}]}`)
	s.spawn(t, "tools", `{"turns":[{"text":"Let me echo.","tool_calls":[{"name":"echo","args":{"text":"hi"}}]},{"text":"Echoed."}]}`)
	s.spawn(t, "approval", `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"secret"}}]},{"text":"Approved and done."}]}`, `approval:{"tools":["echo"]}`)
	s.spawn(t, "question", `{"turns":[{"tool_calls":[{"name":"ask_user","args":{"question":"Where to?","options":["staging","production"]}}]},{"text":"Deploying to staging."}]}`, "ask_user")
	s.spawn(t, "error", `{"turns":[{"error":{"status":500,"message":"upstream down"}}],"when_exhausted":"error"}`)
	abort := s.spawn(t, "abort", `{"turns":[{"text":"Sleeping.","tool_calls":[{"name":"sleep","args":{"ms":60000}}]},{"text":"never"}]}`)
	ends, err := abort.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ends.Close()

	var out []byte
	cmd := exec.CommandContext(ctx, n.Node, "--test", "agui.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGUI_BASE_URL="+s.url)
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	t.Logf("node --test:\n%s", out)

	// abortRun closed the request: the run is aborted, its history kept.
	select {
	case ev := <-ends.C:
		if r := ev.GetAgentEnd().GetReason(); r != "aborted" {
			t.Fatalf("the run ended %q, want aborted", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not end after the client aborted it")
	}
	msgs, err := abort.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.GetRole()+": "+m.GetContent())
	}
	assertLines(t, got, []string{"user: sleep", "assistant: Sleeping.", "tool: interrupted: aborted by user"})
}
