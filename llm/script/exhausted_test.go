package script

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/tack-run/tack/llm"
)

func TestWhenExhausted(t *testing.T) {
	history := &llm.Request{Messages: []*llm.Message{llm.UserMessage("ping"), llm.AssistantMessage("one"), llm.UserMessage("pong")}}
	tests := []struct {
		name string
		mode string // the when_exhausted field, "" for none
		req  *llm.Request
		want []string // the text of four answers in a row, or "error"
	}{
		{"absent repeats the last turn", ``, history, []string{"one", "two", "two", "two"}},
		{"repeat_last", `, "when_exhausted": "repeat_last"`, history, []string{"one", "two", "two", "two"}},
		{"error", `, "when_exhausted": "error"`, history, []string{"one", "two", "error", "error"}},
		{"echo answers the last user text", `, "when_exhausted": "echo"`, history, []string{"one", "two", "pong", "pong"}},
		{"echo without a user message", `, "when_exhausted": "echo"`, &llm.Request{}, []string{"one", "two", "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(mustParse(t, `{"turns": [{"text": "one"}, {"text": "two"}]`+tt.mode+`}`))
			var got []string
			for range 4 {
				o := stream(t.Context(), p, tt.req)
				var e *llm.Error
				switch {
				case errors.As(o.err, &e) && *e == llm.Error{Status: 400, Message: "script exhausted"}:
					got = append(got, "error")
				case o.err != nil:
					t.Fatalf("Stream: %v", o.err)
				default:
					got = append(got, o.resp.Message.GetContent())
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("answers %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEchoWithoutTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(mustParse(t, `{"when_exhausted": "echo"}`))
		o := stream(t.Context(), p, &llm.Request{Messages: []*llm.Message{llm.UserMessage("héllo")}})
		if got := summary(o.resp); o.err != nil || got != `end_turn "héllo" usage 2+2=4` {
			t.Fatalf("Stream = %s, %v", got, o.err)
		}
		if want := []string{`0s text "héllo"`}; !slices.Equal(o.steps, want) {
			t.Fatalf("chunks:\n%s", diff(o.steps, want))
		}
	})
}

func TestRepeatLastKeepsIDsUnique(t *testing.T) {
	// A repeated tool-calling turn gets new ids as the history grows.
	p := New(mustParse(t, `{"turns": [{"tool_calls": [{"name": "echo"}]}]}`))
	req := &llm.Request{}
	var ids []string
	for range 3 {
		o := stream(t.Context(), p, req)
		if o.err != nil {
			t.Fatal(o.err)
		}
		c := o.resp.Message.GetToolCalls()[0]
		ids = append(ids, c.GetId())
		req.Messages = append(req.Messages, o.resp.Message, llm.ToolResultMessage(c.GetId(), "ok", false))
	}
	if want := []string{"c-1", "c-2", "c-3"}; !slices.Equal(ids, want) {
		t.Fatalf("ids %q, want %q", ids, want)
	}
	if err := llm.Validate(req.Messages); err != nil {
		t.Fatal(err)
	}
}

// TestIDsNumberedPastAHistoryAhead: a history whose ids run ahead of its
// count of calls — a fork's, which holds c-5 but not the four calls its
// source compacted — gets ids after its newest, also once that id has
// left the requests (compacted: CallsBefore counts it) and in a Provider
// that took up the stored state; a history numbered throughout keeps the
// stored state as it was. Before, ids were numbered after the count
// alone, and the fork's first call was c-2 while c-5 had taken its place.
func TestIDsNumberedPastAHistoryAhead(t *testing.T) {
	s := mustParse(t, `{"turns": [{"tool_calls": [{"name": "echo"}]}]}`)
	p := New(s)
	forked := []*llm.Message{llm.UserMessage("go"), withCalls(5, 1), llm.ToolResultMessage("c-5", "ok", false), llm.UserMessage("more")}
	first := stream(t.Context(), p, &llm.Request{Messages: forked})
	compacted := stream(t.Context(), p, &llm.Request{CallsBefore: 2})
	restored := New(s)
	if err := restored.LoadState(p.SaveState()); err != nil {
		t.Fatal(err)
	}
	later := stream(t.Context(), restored, &llm.Request{CallsBefore: 3})
	var ids []string
	for _, o := range []outcome{first, compacted, later} {
		if o.err != nil {
			t.Fatal(o.err)
		}
		ids = append(ids, o.resp.Message.GetToolCalls()[0].GetId())
	}
	if want := []string{"c-6", "c-7", "c-8"}; !slices.Equal(ids, want) {
		t.Errorf("ids %q, want %q", ids, want)
	}
	plain := New(s)
	stream(t.Context(), plain, &llm.Request{Messages: []*llm.Message{withCalls(1, 1), llm.ToolResultMessage("c-1", "ok", false)}})
	if got := string(plain.SaveState()); got != `{"next":1}` {
		t.Errorf("state of a history numbered throughout %s", got)
	}
	if err := New(s).LoadState([]byte(`{"next":0,"ahead":-1}`)); err == nil {
		t.Error("a negative offset was taken up")
	}
}
