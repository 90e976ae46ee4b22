package cluster_test

import (
	"slices"
	"testing"

	"github.com/tack-run/tack/cluster"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// sleeper's first turn runs a sleep long enough to be killed in.
const sleeper = `{"turns":[{"text":"Sleeping.","tool_calls":[{"name":"sleep","args":{"ms":30000}}]},{"text":"Queued answer."},{"text":"Next answer."}]}`

// TestClusterMemberDies: kill -9 the member that runs a session in the
// middle of a tool; the next command, through another member, brings the
// session back there, restored.
func TestClusterMemberDies(t *testing.T) {
	tc := startCluster(t)
	id := sessionID("b")
	if _, err := cluster.Reply(within(t, wait), client, id, &eventsv1.CreateSession{Script: &eventsv1.RawJSON{Json: []byte(sleeper)}}); err != nil {
		t.Fatal(err)
	}
	rec := follow(t, id, 0)
	if r, err := cluster.Reply(within(t, wait), client, id, &eventsv1.Prompt{Text: "first"}); err != nil || r.GetPrompt().GetQueued() {
		t.Fatalf("prompt: %v %v", r, err)
	}
	rec.until(t, "tool_execution_start", wait)
	if r, err := cluster.Reply(within(t, wait), client, id, &eventsv1.Prompt{Text: "queued"}); err != nil || !r.GetPrompt().GetQueued() {
		t.Fatalf("prompt while running: %v %v", r, err)
	}
	before := rec.until(t, "prompt_queued", wait)
	last := before[len(before)-1].Seq

	host := tc.host(t, id)
	tc.members[host].Kill()
	other := tc.members[(host+1)%3]
	pid := lookup(t, other, id) // restores the session where it now belongs

	// The follower subscribed again when the grain went, and is told the
	// gap, then what the restore found.
	recovered := rec.until(t, "agent_end", 3*wait)
	if got, want := typesOf(recovered), []string{"events_lost", "agent_recovered", "message_committed", "agent_end"}; !slices.Equal(got, want) {
		t.Fatalf("after the kill: events\n got %q\nwant %q", got, want)
	}
	first := recovered[1].Seq
	if l := recovered[0].GetEventsLost(); l.From != last+1 || l.To != first-1 {
		t.Fatalf("events_lost %v after seq %d, restored events from %d", l, last, first)
	}
	if r := recovered[1].GetAgentRecovered(); r.FromState != "executing_tools" || r.InterruptedCalls != 1 || r.GetRunId() != "r-1" {
		t.Fatalf("agent_recovered %v", r)
	}
	if m := recovered[2].GetMessageCommitted().GetMessage(); m.Role != "tool" || m.Content != "interrupted: process restarted" {
		t.Fatalf("committed %v", m)
	}
	if e := recovered[3].GetAgentEnd(); e.Reason != "interrupted" || e.RunId != "r-1" {
		t.Fatalf("agent_end %v", e)
	}
	for i, ev := range recovered[1:] {
		if ev.Seq != first+uint64(i) {
			t.Fatalf("restored event %d has seq %d", i, ev.Seq)
		}
	}
	if now := tc.host(t, id); now == host {
		t.Fatalf("the session's grain is still on the killed member %d", host)
	}

	// Its queue came back, and the next prompt, through another member,
	// runs.
	st := request(t, pid, &eventsv1.GetState{}).GetState()
	if st.State != "idle" || !slices.Equal(st.PromptQueue, []string{"queued"}) || st.MessageCount != 3 {
		t.Fatalf("state after the restore: %v", st)
	}
	request(t, pid, &eventsv1.Prompt{Text: "after"})
	after := rec.until(t, "agent_end", wait)
	if got, want := typesOf(after), append([]string{"prompt_received", "agent_start", "message_committed", "message_committed"}, textRun[3:]...); !slices.Equal(got, want) {
		t.Fatalf("the next run: events\n got %q\nwant %q", got, want)
	}
	if after[0].Seq != recovered[3].Seq+1 {
		t.Fatalf("the next run starts at seq %d after %d", after[0].Seq, recovered[3].Seq)
	}
	want := []string{"user:first", "assistant:Sleeping.", "tool:interrupted: process restarted", "user:queued", "user:after", "assistant:Queued answer."}
	if got := history(request(t, pid, &eventsv1.GetMessages{})); !slices.Equal(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}
}
