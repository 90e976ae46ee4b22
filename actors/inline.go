package actors

import (
	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/inlinetag"
)

// A model may write <title>…</title> and <status>…</status> in its text
// (package inlinetag): they become title_generated and status_update, and
// stay out of message_delta, the committed message and response_complete.

// showText tells the pieces of streamed text: plain text as message_delta
// (and into the text an interruption commits), tags as their events.
func (s *session) showText(p *partial, pieces []inlinetag.Piece) {
	for _, pc := range pieces {
		switch pc.Tag {
		case "":
			p.text.WriteString(pc.Text)
			s.publish(events.NewMessageDelta(pc.Text))
		case inlinetag.Title:
			s.generatedTitle(pc.Text)
		case inlinetag.Status:
			s.emit(&eventsv1.StatusUpdate{Text: pc.Text})
		}
	}
}

// stripTags returns msg with the inline tags taken out of its content: a
// copy when there were any, msg itself otherwise (it is never modified).
func stripTags(msg *llm.Message) *llm.Message {
	text := inlinetag.Strip(msg.Content)
	if text == msg.Content {
		return msg
	}
	out := proto.Clone(msg).(*llm.Message)
	out.Content = text
	return out
}
