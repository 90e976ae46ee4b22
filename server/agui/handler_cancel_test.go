package agui

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack"
)

// TestCancellingWhatIsGoneEndsTheRun: an interrupt that timed out or was
// answered elsewhere can still be cancelled, so the client's thread moves
// on; the run ends at once.
func TestCancellingWhatIsGoneEndsTheRun(t *testing.T) {
	s := newServer(t)
	s.spawn(t, "s1", `{"turns":[{"text":"hi"}]}`)
	evs := s.run(t, "s1", resumeInput("s1", "run-2", `[{"interruptId":"ap-9","status":"cancelled"}]`))
	got, _ := json.Marshal(evs)
	if want := `[{"runId":"run-2","threadId":"s1","type":"RUN_STARTED"},{"outcome":{"type":"success"},"runId":"run-2","threadId":"s1","type":"RUN_FINISHED"}]`; string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestCancelledQuestionAbortsTheRun(t *testing.T) {
	s := newServer(t)
	s.spawn(t, "s1", `{"turns":[{"tool_calls":[{"name":"ask_user","args":{"question":"Which?"}}]},{"text":"never"}]}`, "ask_user")
	s.run(t, "s1", input("s1", "run-1", "ask me"))
	evs := s.run(t, "s1", resumeInput("s1", "run-2", `[{"interruptId":"q-1","status":"cancelled"}]`))
	last := evs[len(evs)-1]
	if o := last["outcome"].(map[string]any); last["type"] != "RUN_FINISHED" || o["type"] != "cancelled" {
		t.Errorf("last event %v", last)
	}
}

// TestDisconnectAborts: closing the request mid-run aborts it, killing
// the killable tool; the committed history stays.
func TestDisconnectAborts(t *testing.T) {
	s := newServer(t)
	sess := s.spawn(t, "s1", `{"turns":[{"text":"Sleeping.","tool_calls":[{"name":"sleep","args":{"ms":30000}}]},{"text":"never"}]}`)
	sub, err := sess.Subscribe(context.Background(), tack.SubscribeOptions{Types: []string{"agent_end", "tool_killed"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	resp := s.post(t, ctx, "s1", input("s1", "run-1", "sleep"))
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"name":"tool_execution_start"`) {
			break
		}
	}
	cancel()
	resp.Body.Close()
	var got []string
	timeout := time.After(10 * time.Second)
	for len(got) < 2 {
		select {
		case ev := <-sub.C:
			b, _ := json.Marshal(map[string]any{"kill": ev.GetToolKilled().GetReason(), "end": ev.GetAgentEnd().GetReason()})
			got = append(got, string(b))
		case <-timeout:
			t.Fatalf("no abort after the disconnect; events so far: %v", got)
		}
	}
	assertLines(t, got, []string{`{"end":"","kill":"aborted"}`, `{"end":"aborted","kill":""}`})
	msgs, err := sess.Messages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[1].GetContent() != "Sleeping." || msgs[2].GetContent() != "interrupted: aborted by user" {
		t.Errorf("history after the abort: %v", msgs)
	}
}
