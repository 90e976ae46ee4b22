package chatui

import (
	"fmt"
	"strings"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/ansi"
)

// Status is what the status line shows, kept up to date from events.
type Status struct {
	State string
	// Tool names the running tools while executing_tools.
	Tool          string
	ContextUsed   int64
	ContextWindow *int64
	SessionTokens int64
	// Approval and Question are pending requests for the person.
	Approval *eventsv1.ApprovalRequired
	Question *eventsv1.AskUser
}

// Busy reports whether a run is in progress.
func (s Status) Busy() bool { return s.State != "" && s.State != "idle" }

// Update follows one event. What the status line shows of it is made
// printable (ansi.Printable); the approval and the question are kept as
// they are, to be answered by their ids.
func (s *Status) Update(ev *eventsv1.Event) {
	switch e := ev.Payload.(type) {
	case *eventsv1.Event_StateChanged:
		s.State = e.StateChanged.To
		if s.State != "executing_tools" {
			s.Tool = ""
		}
	case *eventsv1.Event_AgentStatus:
		s.Tool = ansi.Printable(e.AgentStatus.GetToolName())
	case *eventsv1.Event_TokenUsage:
		s.ContextUsed = e.TokenUsage.ContextUsed
		s.ContextWindow = e.TokenUsage.ContextWindow
		s.SessionTokens = e.TokenUsage.SessionTotalTokens
	case *eventsv1.Event_ApprovalRequired:
		s.Approval = e.ApprovalRequired
	case *eventsv1.Event_ApprovalResolved:
		if s.Approval.GetApprovalId() == e.ApprovalResolved.ApprovalId {
			s.Approval = nil
		}
	case *eventsv1.Event_AskUser:
		s.Question = e.AskUser
	case *eventsv1.Event_UserResponded:
		s.Question = nil
	}
}

// Render returns the status line: state, tool, and
// "Context: 7.6% | Session: 28.5K tokens" with the context coloured green
// below 50%, yellow to 80% and red above (absolute tokens when the window
// is unknown).
func (s *Status) Render(color bool) string {
	state := s.State
	if state == "" {
		state = "idle"
	}
	parts := []string{paint(color, stateColor(state), state)}
	if s.Tool != "" {
		parts = append(parts, paint(color, ansi.Blue, s.Tool))
	}
	parts = append(parts, s.contextText(color)+" | Session: "+Tokens(s.SessionTokens)+" tokens")
	return strings.Join(parts, " · ")
}

func (s *Status) contextText(color bool) string {
	if s.ContextWindow == nil || *s.ContextWindow <= 0 {
		return "Context: " + Tokens(s.ContextUsed) + " tokens"
	}
	pct := float64(s.ContextUsed) * 100 / float64(*s.ContextWindow)
	col := ansi.Green
	switch {
	case pct > 80:
		col = ansi.Red
	case pct >= 50:
		col = ansi.Yellow
	}
	return "Context: " + paint(color, col, fmt.Sprintf("%.1f%%", pct))
}

// Tokens formats a token count: 950, 28.5K, 1.2M.
func Tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

func stateColor(state string) string {
	switch state {
	case "running":
		return ansi.Yellow
	case "streaming":
		return ansi.Cyan
	case "executing_tools":
		return ansi.Blue
	}
	return ansi.Dim
}

// paint wraps s in an ANSI style when color is on.
func paint(color bool, style, s string) string { return ansi.Paint(color, style, s) }
