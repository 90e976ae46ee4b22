package actors

import (
	"slices"
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// described lists events as their types, with the text of the ones inline
// tags concern: message_delta, title_generated, status_update.
func described(evs []*eventsv1.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = events.Type(ev)
		switch {
		case ev.GetMessageDelta() != nil:
			out[i] += ":" + ev.GetMessageDelta().Delta
		case ev.GetTitleGenerated() != nil:
			out[i] += ":" + ev.GetTitleGenerated().Title
		case ev.GetStatusUpdate() != nil:
			out[i] += ":" + ev.GetStatusUpdate().Text
		}
	}
	return out
}

// TestInlineTags: <title> and <status> split across 5-character chunks
// become title_generated and status_update where they end, and stay out
// of the deltas, response_complete and the committed message; the title
// replaces the first prompt's, in get_state and the session list.
func TestInlineTags(t *testing.T) {
	h := newHarness(t, `{"turns":[{"text":"<title>Fix the build</title>\nLooking.<status>Reading</status> Done.","chunk_size":5}]}`, nil)
	h.ok(&eventsv1.Prompt{Text: "please fix it"})
	h.waitFor("agent_end", 1)
	want := seq(one("session_created"), runStart, one("state_changed", "message_start",
		"title_generated:Fix the build", "message_delta:L", "message_delta:ookin", "message_delta:g.",
		"status_update:Reading", "message_delta: Don", "message_delta:e.",
		"response_complete", "message_committed", "token_usage"), runEnd)
	if got := described(h.rec.Events()); !slices.Equal(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	rc := findAll(h.rec.Events(), "response_complete")[0].GetResponseComplete()
	if rc.Message.Content != "Looking. Done." {
		t.Fatalf("response_complete content %q", rc.Message.Content)
	}
	if got := contents(h.history()); !slices.Equal(got, []string{"user:please fix it", "assistant:Looking. Done."}) {
		t.Fatalf("history %q", got)
	}
	if st := h.state(); st.Title != "Fix the build" {
		t.Fatalf("get_state title %q", st.Title)
	}
	if sum := h.ok(&GetSummary{}).GetSessions().GetSessions()[0]; sum.Title != "Fix the build" {
		t.Fatalf("summary title %q", sum.Title)
	}
}

// TestUnterminatedTagIsText: an opening tag never closed is plain text,
// told as the response ends, in one delta with what was held back.
func TestUnterminatedTagIsText(t *testing.T) {
	h := newHarness(t, `{"turns":[{"text":"Hi <title>never closed","chunk_size":6}]}`, nil)
	h.ok(&eventsv1.Prompt{Text: "hi"})
	h.waitFor("agent_end", 1)
	want := seq(one("session_created"), runStart, one("state_changed", "message_start",
		"message_delta:Hi ", "message_delta:<title>never closed",
		"response_complete", "message_committed", "token_usage"), runEnd)
	if got := described(h.rec.Events()); !slices.Equal(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	if got := contents(h.history()); !slices.Equal(got, []string{"user:hi", "assistant:Hi <title>never closed"}) {
		t.Fatalf("history %q", got)
	}
	if st := h.state(); st.Title != "hi" {
		t.Fatalf("title %q, want the prompt's", st.Title)
	}
}

// TestAbortInsideTag: an abort while a tag is held back ends the
// response there: the held text is plain text, told as a delta after
// agent_abort and committed with the rest; no tag event is made up.
func TestAbortInsideTag(t *testing.T) {
	g := newGate()
	h := newHarnessModel(t, held(t, "", `{"turns":[{"text":"Hello <status>still typing","chunk_size":4}]}`, g, 2), nil)
	h.ok(&eventsv1.Prompt{Text: "hi"})
	h.waitMatch(func(ev *eventsv1.Event) bool { return ev.GetMessageDelta().GetDelta() == "o " })
	h.ok(&eventsv1.Abort{})
	h.waitFor("agent_end", 1)
	want := seq(one("session_created"), runStart, one("state_changed", "message_start", "message_delta:Hell", "message_delta:o ",
		"agent_abort", "message_delta:<s", "message_committed", "turn_end", "state_changed", "agent_status", "agent_end"))
	if got := described(h.rec.Events()); !slices.Equal(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	if got := contents(h.history()); !slices.Equal(got, []string{"user:hi", "assistant:Hello <s" + interruptedSuffix}) {
		t.Fatalf("history %q", got)
	}
}
