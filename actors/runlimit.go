package actors

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/internal/delayline"
)

// RunLimiter bounds how many runs each user has in progress at once (a
// policy's max_running). Sessions call it on their actor's goroutine;
// many sessions call it at once.
type RunLimiter interface {
	// Start counts a run of user about to start and reports whether it
	// may; when it may not, nothing is counted. With force the run is
	// counted whatever the bound: a run that follows one that ended (an
	// interrupting prompt's), which the user did not ask for anew.
	Start(user string, force bool) bool
	// End counts a run of user that ended.
	End(user string)
	// Limit is user's bound, 0 for none, for the message of a refusal.
	Limit(user string) int
	// Keep keeps the place of a run of user that outlives the actor of
	// session id: the session stopped (closed, passivated) while the run
	// waits for a person, and a restore takes the run up. The place stays
	// counted until TakeUp or Drop.
	Keep(user, id string)
	// TakeUp hands the place kept for session id, if any, to its restore,
	// which counts it as its run's or gives it back (End): it returns the
	// place's user, "" when none was kept.
	TakeUp(id string) string
	// Drop gives back the places kept for session id and its sub-agents
	// (it was deleted).
	Drop(id string)
}

// The user's runs: a prompt or steer that would start a run while the
// session's owner has as many in progress as allowed is refused with
// rate_limited, and changes nothing. Sub-agents' runs are their parent's
// and are not counted.

// load is what the runtime around a session counts of it. Its place in
// its user's count of runs: admitted, a run is reserved for the prompt
// being handled; counted, the run in progress is counted. The tools that
// ignored their cancellation for longer than the grace and still run
// (toolrun.go): get_state shows them, and while there are any the session
// does not passivate. And how long it has been quiet (passivate.go): the
// messages it took (passivation's own aside), its pending passivation
// timer, its pending idle trim (run.go), and whether it passivated and
// stops to leave its place (left).
type load struct {
	admitted, counted, left bool
	stopped                 bool // the actor is past its shutdown (mortal, flush)
	abandoned               atomic.Int32
	activity                uint64
	passivation             *delayline.Entry
	trim                    *delayline.Entry
}

// limitedUser is the user whose runs the session counts, "" when none:
// no limiter, no owner, or a sub-agent that its parent's call waits for
// (a run it makes for the call is the parent's). A sub-agent its owner
// prompts once no call waits for it runs for its owner, and counts like
// any session's: otherwise a user's one session could start children and
// then run them all at once.
func (s *session) limitedUser() string {
	if s.home.env.Runs == nil || s.awaited() {
		return ""
	}
	return s.spec.Stored.User
}

// awaited reports whether a parent's subagent call waits for the session
// (its childSink is attached).
func (s *session) awaited() bool {
	return slices.ContainsFunc(s.out.sinks, func(k events.Sink) bool {
		_, ok := k.(*childSink)
		return ok
	})
}

// admitRun reserves a run for the prompt or steer being handled, or
// answers rate_limited and reports false. A run paused for a person is
// superseded by the new one, which takes its place.
func (s *session) admitRun(ctx actor.Context) bool {
	user := s.limitedUser()
	if user == "" || s.run != nil && !s.load.counted {
		return true
	}
	if s.run != nil {
		// The new run takes the paused one's place, unless that place
		// was over the bound: a paused run restored while the user's
		// other runs held every place counts all the same.
		s.home.env.Runs.End(user)
		if s.home.env.Runs.Start(user, false) {
			return true
		}
		s.home.env.Runs.Start(user, true)
	} else if s.home.env.Runs.Start(user, false) {
		s.load.admitted = true
		return true
	}
	s.fail(ctx, events.CodeRateLimited, fmt.Sprintf("%s has %d runs in progress, the most allowed (max_running): wait for one to end",
		user, s.home.env.Runs.Limit(user)))
	return false
}

// unadmit gives back a run admitRun reserved that did not start (a plugin
// refused the prompt).
func (s *session) unadmit() {
	if s.load.admitted {
		s.load.admitted = false
		s.home.env.Runs.End(s.limitedUser())
	}
}

// countRun counts the run starting now: as reserved by admitRun, else
// forced.
func (s *session) countRun() {
	user := s.limitedUser()
	switch {
	case user == "":
	case s.load.admitted:
		s.load.admitted, s.load.counted = false, true
	case !s.load.counted:
		s.home.env.Runs.Start(user, true)
		s.load.counted = true
	}
}

// leaveRun is uncountRun for a session that stops: a run waiting for a
// person, which its restore takes up (there is a store or a Park to
// restore it from), keeps its place (a user who closed
// such sessions one after another could otherwise run them all at once
// once they were restored and approved).
func (s *session) leaveRun() {
	if s.load.counted && s.home.env.Unloaded() != nil && s.run != nil && s.run.batch != nil && s.run.batch.holding() {
		s.load.counted = false
		s.home.env.Runs.Keep(s.limitedUser(), s.spec.ID)
		return
	}
	s.uncountRun()
}

// takeUpRun counts, as a restore takes the session up, the run it
// resumes (held): in the place the run kept when the session stopped, or
// in a new one, past the bound if need be. A kept place whose run does
// not resume (its approval timed out meanwhile) is given back.
func (s *session) takeUpRun(held bool) {
	runs := s.home.env.Runs
	if runs == nil {
		return
	}
	kept := runs.TakeUp(s.spec.ID)
	if held && kept != "" && kept == s.limitedUser() {
		s.load.counted = true // the kept place is the run's
		return
	}
	if kept != "" {
		runs.End(kept)
	}
	if held {
		s.countRun()
	}
}

// uncountRun counts the end of the run, when it was counted.
func (s *session) uncountRun() {
	if s.load.counted {
		s.load.counted = false
		s.home.env.Runs.End(s.limitedUser())
	}
}
