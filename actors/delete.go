package actors

import (
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
)

// InUse asks a session actor whether it is in use (a deletion of unused
// sessions only); it answers a Reply whose error says why when it is.
type InUse struct{}

// use answers InUse: nil when nothing uses the session.
func (s *session) use() *eventsv1.ErrorInfo {
	approvals, question := s.pending()
	why := ""
	switch {
	case s.machine.Current() != fsm.Idle || s.run != nil:
		why = "a run is in progress"
	case !s.q.Empty():
		why = "input is queued"
	case len(approvals) > 0 || question != nil:
		why = "an approval or a question is pending"
	case len(s.out.sinks) > 0:
		why = "an event stream is open"
	default:
		return nil
	}
	return &eventsv1.ErrorInfo{Code: events.CodeBusy, Message: why}
}
