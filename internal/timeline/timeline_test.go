package timeline

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// TestTimeline: state on every line, streamed text kept on one line, the
// thinking and the answer on lines of their own, no colour when off.
func TestTimeline(t *testing.T) {
	start := time.Unix(100, 0)
	var out bytes.Buffer
	p := New(&out, false, start)
	at := func(ms int, payload proto.Message) {
		ev := events.New(payload)
		ev.TsUnixNano = start.Add(time.Duration(ms) * time.Millisecond).UnixNano()
		p.Event(ev)
	}
	at(0, &eventsv1.AgentStart{RunId: "r-1"})
	at(10, &eventsv1.StateChanged{From: "idle", To: "running"})
	at(20, &eventsv1.StateChanged{From: "running", To: "streaming"})
	at(30, &eventsv1.ThinkingDelta{Delta: "hmm"})
	at(40, &eventsv1.MessageDelta{Delta: "Hel"})
	at(50, &eventsv1.MessageDelta{Delta: "lo"})
	at(60, &eventsv1.StateChanged{From: "streaming", To: "executing_tools"})
	at(70, &eventsv1.ToolExecutionEnd{Name: "sleep", Ok: false, Result: "skipped: a steering message arrived"})
	at(75, &eventsv1.ToolExecutionEnd{Name: "shell", Ok: true, Result: "\x1b]52;c;cm0K\x07done"})
	at(80, &eventsv1.AgentAbort{})
	p.Close()
	want := []string{
		"  0.00s  idle            │ run r-1 started",
		"  0.03s  streaming       │ hmm",
		"  0.04s  streaming       │ Hello",
		"  0.07s  executing_tools │ ✗ sleep skipped: a steering message arrived",
		"  0.07s  executing_tools │ ✓ shell ^[]52;c;cm0K^Gdone",
		"  0.08s  executing_tools │ abort delivered",
	}
	if got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Fatal("escape codes with colour off")
	}
}
