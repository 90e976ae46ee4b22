package chatui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/ansi"
)

// Describe returns what the chat prints for an event: streamed text as it
// comes, whole lines (ending in a newline) for everything else, or "" for
// events a person does not need to see. What the event's text holds that
// would steer a terminal is shown instead (ansi.Printable): a model, a
// tool or a provider writes that text.
func Describe(ev *eventsv1.Event, color bool) string {
	switch e := ansi.PrintableMessage(ev).Payload.(type) {
	case *eventsv1.Event_MessageDelta:
		return e.MessageDelta.Delta
	case *eventsv1.Event_ThinkingStart:
		return paint(color, ansi.Dim, "(thinking) ")
	case *eventsv1.Event_ThinkingDelta:
		return paint(color, ansi.Dim, e.ThinkingDelta.Delta)
	case *eventsv1.Event_ResponseComplete:
		return "\n"
	case *eventsv1.Event_ToolExecutionStart:
		return paint(color, ansi.Blue, "⚙ "+e.ToolExecutionStart.Name) + " " + oneLine(e.ToolExecutionStart.GetArgs().GetJson()) + "\n"
	case *eventsv1.Event_ToolExecutionEnd:
		mark, col := "✓", ansi.Green
		if !e.ToolExecutionEnd.Ok {
			mark, col = "✗", ansi.Red
		}
		return paint(color, col, mark+" "+e.ToolExecutionEnd.Name) + " " + summary(e.ToolExecutionEnd.Result) + "\n"
	case *eventsv1.Event_PromptQueued:
		return paint(color, ansi.Yellow, fmt.Sprintf("(queued: %s)", e.PromptQueued.Text)) + "\n"
	case *eventsv1.Event_SteeringReceived:
		return paint(color, ansi.Yellow, fmt.Sprintf("(steering %s: %s)", e.SteeringReceived.Status, e.SteeringReceived.Text)) + "\n"
	case *eventsv1.Event_AgentAbort:
		return paint(color, ansi.Red, "(aborted)") + "\n"
	case *eventsv1.Event_StreamError:
		return paint(color, ansi.Red, "stream failed: "+e.StreamError.Error) + "\n"
	case *eventsv1.Event_Error:
		return paint(color, ansi.Red, e.Error.Code+": "+e.Error.Message) + "\n"
	case *eventsv1.Event_Retry:
		return paint(color, ansi.Yellow, fmt.Sprintf("(retry %d in %d ms: %s)", e.Retry.Attempt, e.Retry.DelayMs, e.Retry.Reason)) + "\n"
	case *eventsv1.Event_StreamStalled:
		return paint(color, ansi.Yellow, fmt.Sprintf("(no data for %d s)", e.StreamStalled.ElapsedMs/1000)) + "\n"
	case *eventsv1.Event_ContextOverflow:
		return paint(color, ansi.Red, "context overflow: "+e.ContextOverflow.Reason) + "\n"
	case *eventsv1.Event_ModelSwitched:
		return paint(color, ansi.Dim, fmt.Sprintf("(model %s → %s)", e.ModelSwitched.From, e.ModelSwitched.To)) + "\n"
	case *eventsv1.Event_ApprovalRequired:
		a := e.ApprovalRequired
		return paint(color, ansi.Bold+ansi.Yellow, fmt.Sprintf("%s wants to run %s %s", a.ApprovalId, a.Tool, oneLine(a.GetArgs().GetJson()))) +
			" — allow? [y]es, [n]o, [a]lways\n"
	case *eventsv1.Event_AskUser:
		q := e.AskUser
		opts := ""
		if len(q.Options) > 0 {
			opts = " [" + strings.Join(q.Options, " / ") + "]"
		}
		return paint(color, ansi.Bold+ansi.Yellow, "? "+q.Question) + opts + "\n"
	case *eventsv1.Event_EventsLost:
		return paint(color, ansi.Red, fmt.Sprintf("(events %d–%d were not shown)", e.EventsLost.From, e.EventsLost.To)) + "\n"
	}
	return ""
}

// oneLine is a call's arguments on one line: JSON as the model wrote it
// may put line feeds between its tokens, and enough of them would push
// what an approval asks about off the screen above the question. JSON
// that does not parse has its line breaks shown as \n.
func oneLine(args []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, args) == nil {
		return b.String()
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(string(args))
}

// summary is the first line of a tool result, shortened.
func summary(s string) string {
	s = strings.TrimSpace(s)
	more := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, more = s[:i], true
	}
	if r := []rune(s); len(r) > 100 {
		s, more = string(r[:100]), true
	}
	if more {
		s += " …"
	}
	return s
}
