// Package timeline prints a session's events as a readable timeline, one
// line per step with the elapsed time and the session's state, streaming
// text as it arrives. `tack demo` uses it.
//
// # Usage
//
//	p := timeline.New(os.Stdout, timeline.ColorFor(os.Stdout), time.Now())
//	p.Action("prompt %q", text)
//	for ev := range sub.C { p.Event(ev) }
//
// # Concurrency
//
// A Printer is used from one goroutine.
package timeline

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/ansi"
)

// The styles the timeline uses.
const (
	reset  = ansi.Reset
	bold   = ansi.Bold
	dim    = ansi.Dim
	red    = ansi.Red
	green  = ansi.Green
	yellow = ansi.Yellow
	blue   = ansi.Blue
	purple = ansi.Purple
	cyan   = ansi.Cyan
)

// stateColor colours the state column.
var stateColor = map[string]string{"idle": dim, "running": yellow, "streaming": cyan, "executing_tools": purple}

// Printer writes the timeline.
type Printer struct {
	w      io.Writer
	color  bool
	start  time.Time
	state  string
	inText bool   // a streamed text line is open
	textOf string // the style of the open text line
}

// New returns a printer that measures time from start.
func New(w io.Writer, color bool, start time.Time) *Printer {
	return &Printer{w: w, color: color, start: start, state: "idle"}
}

// ColorFor reports whether f is a terminal that should get colours
// (respecting NO_COLOR).
func ColorFor(f *os.File) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Action prints something the user (or the demo driver) did.
func (p *Printer) Action(format string, args ...any) {
	p.line(time.Now(), bold+"▶ "+fmt.Sprintf(format, args...)+reset)
}

// Note prints a line of the driver's own.
func (p *Printer) Note(s string) { p.line(time.Now(), dim+s+reset) }

// Event prints one event; events a person does not need are skipped.
func (p *Printer) Event(ev *eventsv1.Event) {
	at := time.Unix(0, ev.TsUnixNano)
	switch e := ev.Payload.(type) {
	case *eventsv1.Event_StateChanged:
		p.state = e.StateChanged.To
	case *eventsv1.Event_MessageDelta:
		p.text(at, e.MessageDelta.Delta, "")
	case *eventsv1.Event_ThinkingDelta:
		p.text(at, e.ThinkingDelta.Delta, dim)
	default:
		if s := describe(ev); s != "" {
			p.line(at, s)
		}
	}
}

// Close ends an open text line.
func (p *Printer) Close() { p.endText() }

// text streams a delta onto the open text line.
func (p *Printer) text(at time.Time, delta, style string) {
	if p.inText && p.textOf != style {
		p.endText()
	}
	p.textOf = style
	if !p.inText {
		p.prefix(at)
		p.inText = true
	}
	delta = strings.ReplaceAll(delta, "\n", "\n"+strings.Repeat(" ", 28))
	fmt.Fprint(p.w, p.style(style)+delta+p.style(reset))
}

func (p *Printer) endText() {
	if p.inText {
		fmt.Fprintln(p.w)
		p.inText = false
	}
}

// line prints one whole timeline line.
func (p *Printer) line(at time.Time, s string) {
	p.endText()
	p.prefix(at)
	fmt.Fprintln(p.w, p.strip(s))
}

func (p *Printer) prefix(at time.Time) {
	el := at.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "%s%6.2fs%s  %s%-16s%s│ ", p.style(dim), el, p.style(reset), p.style(stateColor[p.state]), p.state, p.style(reset))
}

// style returns an ANSI code when colours are on.
func (p *Printer) style(code string) string {
	if p.color {
		return code
	}
	return ""
}

// strip removes ANSI codes when colours are off.
func (p *Printer) strip(s string) string {
	if p.color {
		return s
	}
	return ansi.Strip(s)
}

// describe is the line an event gets, or "" to skip it.
func describe(ev *eventsv1.Event) string {
	switch e := ev.Payload.(type) {
	case *eventsv1.Event_SessionCreated:
		return dim + "session " + ev.Session + " created on " + e.SessionCreated.Model + reset
	case *eventsv1.Event_AgentStart:
		return green + "run " + e.AgentStart.RunId + " started" + reset
	case *eventsv1.Event_AgentEnd:
		u := e.AgentEnd.Usage
		return fmt.Sprintf("%srun %s ended: %s%s %s(%d tokens)%s", green, e.AgentEnd.RunId, e.AgentEnd.Reason, reset, dim, u.GetTotalTokens(), reset)
	case *eventsv1.Event_PromptQueued:
		return fmt.Sprintf("%sprompt queued at position %d: %q%s", yellow, e.PromptQueued.Position, e.PromptQueued.Text, reset)
	case *eventsv1.Event_SteeringReceived:
		return fmt.Sprintf("%ssteering %s %s: %q%s", yellow, e.SteeringReceived.Ref, e.SteeringReceived.Status, e.SteeringReceived.Text, reset)
	case *eventsv1.Event_SteeringApplied:
		return fmt.Sprintf("%ssteering %s merged into the context%s", yellow, strings.Join(e.SteeringApplied.Refs, ", "), reset)
	case *eventsv1.Event_TurnStart:
		return dim + fmt.Sprintf("turn %d", e.TurnStart.Turn) + reset
	case *eventsv1.Event_ThinkingStart:
		return dim + "thinking…" + reset
	case *eventsv1.Event_ToolExecutionStart:
		return fmt.Sprintf("%s⚙ %s%s %s", blue, e.ToolExecutionStart.Name, reset, e.ToolExecutionStart.GetArgs().GetJson())
	case *eventsv1.Event_ToolExecutionUpdate:
		return dim + "  " + strings.TrimRight(e.ToolExecutionUpdate.Partial, "\n") + reset
	case *eventsv1.Event_ToolExecutionEnd:
		mark, col := "✓", green
		if !e.ToolExecutionEnd.Ok {
			mark, col = "✗", red
		}
		return fmt.Sprintf("%s%s %s%s %s", col, mark, e.ToolExecutionEnd.Name, reset, firstLine(e.ToolExecutionEnd.Result))
	case *eventsv1.Event_ToolSkippedForSteering:
		return fmt.Sprintf("%s%s skipped: a steering message arrived%s", yellow, e.ToolSkippedForSteering.Name, reset)
	case *eventsv1.Event_ToolKilled:
		return fmt.Sprintf("%s%s killed (%s)%s", red, e.ToolKilled.Name, e.ToolKilled.Reason, reset)
	case *eventsv1.Event_AgentAbort:
		return red + bold + "abort delivered" + reset
	case *eventsv1.Event_TokenUsage:
		return dim + usageLine(e.TokenUsage) + reset
	case *eventsv1.Event_StreamError:
		return red + "stream failed: " + e.StreamError.Error + reset
	case *eventsv1.Event_Error:
		return red + e.Error.Code + ": " + e.Error.Message + reset
	case *eventsv1.Event_ModelSwitched:
		return fmt.Sprintf("model %s → %s", e.ModelSwitched.From, e.ModelSwitched.To)
	case *eventsv1.Event_EventsLost:
		return red + fmt.Sprintf("events %d–%d lost", e.EventsLost.From, e.EventsLost.To) + reset
	}
	return ""
}

// usageLine is the status line of PROTOCOL's token_usage.
func usageLine(u *eventsv1.TokenUsage) string {
	if u.ContextPercent == nil {
		return fmt.Sprintf("context: %d tokens | session: %d tokens", u.ContextUsed, u.SessionTotalTokens)
	}
	return fmt.Sprintf("context: %.1f%% | session: %d tokens", *u.ContextPercent, u.SessionTotalTokens)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
