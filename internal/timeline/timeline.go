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

// stateColor colours the state column.
var stateColor = map[string]string{"idle": ansi.Dim, "running": ansi.Yellow, "streaming": ansi.Cyan, "executing_tools": ansi.Purple}

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
	p.line(time.Now(), ansi.Bold+"▶ "+fmt.Sprintf(format, args...)+ansi.Reset)
}

// Note prints a line of the driver's own.
func (p *Printer) Note(s string) { p.line(time.Now(), ansi.Dim+s+ansi.Reset) }

// Event prints one event; events a person does not need are skipped.
// What its text holds that would steer a terminal is shown instead
// (ansi.Printable).
func (p *Printer) Event(ev *eventsv1.Event) {
	ev = ansi.PrintableMessage(ev)
	at := time.Unix(0, ev.TsUnixNano)
	switch e := ev.Payload.(type) {
	case *eventsv1.Event_StateChanged:
		p.state = e.StateChanged.To
	case *eventsv1.Event_MessageDelta:
		p.text(at, e.MessageDelta.Delta, "")
	case *eventsv1.Event_ThinkingDelta:
		p.text(at, e.ThinkingDelta.Delta, ansi.Dim)
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
	fmt.Fprint(p.w, p.style(style)+delta+p.style(ansi.Reset))
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
	fmt.Fprintf(p.w, "%s%6.2fs%s  %s%-16s%s│ ", p.style(ansi.Dim), el, p.style(ansi.Reset), p.style(stateColor[p.state]), p.state, p.style(ansi.Reset))
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
		return ansi.Dim + "session " + ev.Session + " created on " + e.SessionCreated.Model + ansi.Reset
	case *eventsv1.Event_AgentStart:
		return ansi.Green + "run " + e.AgentStart.RunId + " started" + ansi.Reset
	case *eventsv1.Event_AgentEnd:
		u := e.AgentEnd.Usage
		return fmt.Sprintf("%srun %s ended: %s%s %s(%d tokens)%s", ansi.Green, e.AgentEnd.RunId, e.AgentEnd.Reason, ansi.Reset, ansi.Dim, u.GetTotalTokens(), ansi.Reset)
	case *eventsv1.Event_PromptQueued:
		return fmt.Sprintf("%sprompt queued at position %d: %q%s", ansi.Yellow, e.PromptQueued.Position, e.PromptQueued.Text, ansi.Reset)
	case *eventsv1.Event_SteeringReceived:
		return fmt.Sprintf("%ssteering %s %s: %q%s", ansi.Yellow, e.SteeringReceived.Ref, e.SteeringReceived.Status, e.SteeringReceived.Text, ansi.Reset)
	case *eventsv1.Event_SteeringApplied:
		return fmt.Sprintf("%ssteering %s merged into the context%s", ansi.Yellow, strings.Join(e.SteeringApplied.Refs, ", "), ansi.Reset)
	case *eventsv1.Event_TurnStart:
		return ansi.Dim + fmt.Sprintf("turn %d", e.TurnStart.Turn) + ansi.Reset
	case *eventsv1.Event_ThinkingStart:
		return ansi.Dim + "thinking…" + ansi.Reset
	case *eventsv1.Event_ToolExecutionStart:
		return fmt.Sprintf("%s⚙ %s%s %s", ansi.Blue, e.ToolExecutionStart.Name, ansi.Reset, e.ToolExecutionStart.GetArgs().GetJson())
	case *eventsv1.Event_ToolExecutionUpdate:
		return ansi.Dim + "  " + strings.TrimRight(e.ToolExecutionUpdate.Partial, "\n") + ansi.Reset
	case *eventsv1.Event_ToolExecutionEnd:
		mark, col := "✓", ansi.Green
		if !e.ToolExecutionEnd.Ok {
			mark, col = "✗", ansi.Red
		}
		return fmt.Sprintf("%s%s %s%s %s", col, mark, e.ToolExecutionEnd.Name, ansi.Reset, firstLine(e.ToolExecutionEnd.Result))
	case *eventsv1.Event_ToolSkippedForSteering:
		return fmt.Sprintf("%s%s skipped: a steering message arrived%s", ansi.Yellow, e.ToolSkippedForSteering.Name, ansi.Reset)
	case *eventsv1.Event_ToolKilled:
		return fmt.Sprintf("%s%s killed (%s)%s", ansi.Red, e.ToolKilled.Name, e.ToolKilled.Reason, ansi.Reset)
	case *eventsv1.Event_AgentAbort:
		return ansi.Red + ansi.Bold + "abort delivered" + ansi.Reset
	case *eventsv1.Event_TokenUsage:
		return ansi.Dim + usageLine(e.TokenUsage) + ansi.Reset
	case *eventsv1.Event_StreamError:
		return ansi.Red + "stream failed: " + e.StreamError.Error + ansi.Reset
	case *eventsv1.Event_Error:
		return ansi.Red + e.Error.Code + ": " + e.Error.Message + ansi.Reset
	case *eventsv1.Event_ModelSwitched:
		return fmt.Sprintf("model %s → %s", e.ModelSwitched.From, e.ModelSwitched.To)
	case *eventsv1.Event_EventsLost:
		return ansi.Red + fmt.Sprintf("events %d–%d lost", e.EventsLost.From, e.EventsLost.To) + ansi.Reset
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
