package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors/history"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
)

// Compaction replaces the older part of the working history with one
// summary message that a model writes. The summary request runs on a
// goroutine of its own, like a model request; the session goes on
// meanwhile, except that a run waits for it before its next request (the
// turn gap). When the summary is in, the messages it replaces move to the
// archive — what get_messages with all shows, marked compacted — and the
// store takes the new working history and its start in one write, so a
// crash leaves either the old history or the new one.

// SummarisePrompt is the system prompt of a summary request; the request's
// one user message is the transcript of the messages to replace.
const SummarisePrompt = `You are summarising the earlier part of a conversation between a user and an AI assistant that uses tools, so that the assistant can continue the conversation from your summary alone. Write a concise summary that keeps: the user's goals and instructions, decisions made, facts learned (file names, values, results of tool calls), what was done and what remains to do. Write it as plain prose or short bullet points, without preamble.`

// SummaryPrefix starts the content of every summary message.
const SummaryPrefix = "[Summary of the earlier conversation]\n"

// compactions is a session's compaction state: the one in flight, how
// many were started (they are numbered), and whether one is wanted at
// the run's next turn gap.
type compactions struct {
	running *compaction
	n       uint32
	wanted  bool
}

// compaction is a summary request in flight.
type compaction struct {
	n      uint32
	cut    int // the history's messages it replaces: history[:cut]
	cancel context.CancelFunc
	// overflow marks the compaction a context overflow started: the
	// failed request is sent again after it, or the run ends in error.
	overflow bool
}

// compactDone reports a summary request's end.
type compactDone struct {
	n    uint32
	resp *llm.Response
	err  error
}

// compactCommand handles the compact command: at once when no run is in
// progress, else at the run's next turn gap. It answers at once; the
// events tell the rest.
func (s *session) compactCommand(ctx actor.Context) {
	switch {
	case s.compaction.running != nil:
	case s.run != nil:
		s.compaction.wanted = true
	default:
		if !s.startCompaction(false) {
			s.emit(&eventsv1.CompactStart{})
			s.emit(&eventsv1.CompactEnd{RemovedCount: 0})
		}
	}
	s.reply(ctx, &eventsv1.Reply{})
}

// awaitCompaction holds the run's next request while a compaction runs or
// is wanted; it reports whether the run waits (compactionDone resumes it).
func (s *session) awaitCompaction() bool {
	if s.compaction.running == nil && s.compaction.wanted {
		s.compaction.wanted = false
		s.startCompaction(false)
	}
	if s.compaction.running == nil {
		return false
	}
	s.run.awaitCompact = true
	return true
}

// startCompaction sends the summary request, unless there is nothing to
// compact; it reports whether it did.
func (s *session) startCompaction(overflow bool) bool {
	cut := s.hist.CompactCut(s.spec.Stored.Context.Keep())
	if cut == 0 {
		return false
	}
	s.compaction.n++
	parent := context.Background()
	if s.run != nil {
		parent = s.run.ctx
	}
	ctx, cancel := context.WithCancel(parent)
	s.compaction.running = &compaction{n: s.compaction.n, cut: cut, cancel: cancel, overflow: overflow}
	s.emit(&eventsv1.CompactStart{})
	model := s.spec.CompactModel
	if model == nil {
		model = s.spec.Model
	}
	req := &llm.Request{
		Model:       model.ID,
		System:      SummarisePrompt,
		Messages:    []*llm.Message{llm.UserMessage(transcript(s.hist.Messages()[:cut]))},
		CallsBefore: s.hist.CallsOutside() + history.CountCalls(s.hist.Messages()),
	}
	home, n, p := s.home, s.compaction.n, model.Provider
	go func() {
		resp, err := stream(ctx, p, req, func(llm.Chunk) {})
		cancel()
		home.post(&compactDone{n: n, resp: resp, err: err})
	}()
	return true
}

// cancelCompaction cancels the summary request under way, if any: an
// abort stops every model request, whether the compaction serves the run
// or was started with none (compact_end then tells 0). A summary request
// that hung held every later run at its turn gap, and nothing stopped it.
func (s *session) cancelCompaction() {
	if c := s.compaction.running; c != nil {
		c.cancel()
	}
}

// compactionDone applies a summary, unless the model failed or a plugin
// vetoed it, and lets a waiting run go on.
func (s *session) compactionDone(m *compactDone) {
	c := s.compaction.running
	if c == nil || c.n != m.n {
		return
	}
	s.compaction.running = nil
	removed := 0
	switch {
	case m.err != nil && errors.Is(m.err, context.Canceled): // aborted
	case m.err != nil:
		s.emit(&eventsv1.Error{Code: codeModelError, Message: "compaction failed, the history is unchanged: " + m.err.Error()})
	default:
		removed = s.applySummary(c.cut, m.resp.Message.GetContent())
	}
	s.emit(&eventsv1.CompactEnd{RemovedCount: int32(removed)})
	r := s.run
	if r == nil || !r.awaitCompact {
		return
	}
	r.awaitCompact = false
	if c.overflow && removed == 0 {
		msg := "the request does not fit the model's context window, and compaction removed nothing"
		s.emit(&eventsv1.Error{Code: codeContextOverflow, Message: msg})
		s.finishRun(fsm.Finish, events.EndError)
		return
	}
	s.sendRequest()
}

// applySummary asks before_compact, then replaces history[:cut] with the
// summary; it returns how many messages it replaced (0 when vetoed).
func (s *session) applySummary(cut int, summary string) int {
	out := s.hook(&plugins.Event{Hook: plugins.BeforeCompact, Messages: s.hist.Messages()[:cut], Text: summary})
	if out.Stop != nil {
		return 0
	}
	if out.Summary != "" {
		summary = out.Summary
	}
	if r := s.run; r != nil && cut > r.ctl.from && r.ctl.start == nil {
		// The summary will stand for messages of the run: a rollback
		// goes back to before it (history.RollBackTo).
		start := s.hist.Point(r.ctl.from)
		r.ctl.start = &start
	}
	s.hist.Compact(cut, &llm.Message{Role: llm.RoleUser, Content: SummaryPrefix + summary, Summary: true})
	if s.run != nil {
		s.run.ctl.from = max(s.run.ctl.from-cut+1, 1)
	}
	s.touch()
	return cut
}

// transcript renders messages as plain text for the summary request.
func transcript(msgs []*llm.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleTool:
			fmt.Fprintf(&b, "tool result (%s)", m.ToolCallId)
			if m.IsError {
				b.WriteString(", an error")
			}
			fmt.Fprintf(&b, ": %s\n", m.Content)
		default:
			fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "  (calls %s %s, id %s)\n", c.Name, c.GetArgs().GetJson(), c.Id)
			}
		}
	}
	return b.String()
}
