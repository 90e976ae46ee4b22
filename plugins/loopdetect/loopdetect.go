package loopdetect

import (
	"fmt"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
)

// minAlternation is the shortest alternation reported: A B A B.
const minAlternation = 4

// Kinds of loop_detected.
const (
	kindRepeat      = "repeat"
	kindAlternation = "alternation"
)

// plugin is one session's instance: the tail of the current run's calls.
type plugin struct {
	cfg Config

	run        string    // RunID the counts belong to
	last, prev call      // the last call to end, and the one before it
	repeat     int       // calls in the trailing run of last
	alternate  int       // calls in the trailing alternation of prev and last
	pair       [2]string // the tools of that alternation, first one first
}

func (p *plugin) Name() string          { return Name }
func (p *plugin) Priority() int         { return p.cfg.Priority }
func (p *plugin) Hooks() []plugins.Hook { return []plugins.Hook{plugins.AfterTool} }

// Handle counts the call and answers when a loop reaches a limit.
func (p *plugin) Handle(ev *plugins.Event) []plugins.Action {
	if ev.Hook != plugins.AfterTool || ev.Call == nil {
		return nil
	}
	p.observe(ev.RunID, callOf(ev.Call))
	switch {
	case p.repeat >= p.cfg.Threshold:
		return p.answer(kindRepeat, p.repeat)
	case p.alternate >= max(p.cfg.Threshold, minAlternation):
		return p.answer(kindAlternation, p.alternate)
	}
	return nil
}

// observe adds c to the tail of run's calls, starting afresh for a new run.
func (p *plugin) observe(run string, c call) {
	if run != p.run {
		*p = plugin{cfg: p.cfg, run: run}
	}
	switch {
	case p.repeat == 0: // first call of the run
		p.repeat, p.alternate = 1, 1
	case c.key == p.last.key:
		p.repeat++
		p.alternate = 1
	case p.alternate >= 2 && c.key == p.prev.key:
		p.repeat = 1
		p.alternate++
	default:
		p.repeat, p.alternate = 1, 2
		p.pair = [2]string{p.last.tool, c.tool}
	}
	p.prev, p.last = p.last, c
}

// answer is the loop_detected event with an intervention, or with an
// abort once count reaches AbortAt.
func (p *plugin) answer(kind string, count int) []plugins.Action {
	tool := p.last.tool
	said := fmt.Sprintf("called %s with the same arguments %d times in a row", tool, count)
	if kind == kindAlternation {
		if p.pair[0] != p.pair[1] {
			tool = p.pair[0] + ", " + p.pair[1]
		}
		said = fmt.Sprintf("alternated between the same two calls (%s) for %d calls in a row", tool, count)
	}
	emit := plugins.Action{Kind: plugins.Emit, Event: &eventsv1.LoopDetected{Kind: kind, Tool: tool, Count: int32(count)}}
	if p.cfg.AbortAt > 0 && count >= p.cfg.AbortAt {
		return []plugins.Action{emit, {Kind: plugins.Abort, Reason: "loop_detected",
			Text: "loop detected: the model " + said}}
	}
	return []plugins.Action{emit, {Kind: plugins.Intervene,
		Text: "You have " + said + "; the result will not change. Try something different or answer."}}
}
