package events

import eventsv1 "github.com/tack-run/tack/events/v1"

// NewMessageDelta returns New(&eventsv1.MessageDelta{Delta: text}) made
// in one allocation instead of two: a session streams one such event per
// chunk of text, often hundreds a second, and every one is garbage the
// collector must find.
func NewMessageDelta(text string) *eventsv1.Event {
	b := &struct {
		ev eventsv1.Event
		w  eventsv1.Event_MessageDelta
		p  eventsv1.MessageDelta
	}{}
	b.p.Delta = text
	b.w.MessageDelta = &b.p
	b.ev.Payload = &b.w
	return &b.ev
}
