package actors

import (
	"time"

	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/store"
)

// Parking is passivation for a runtime without a store (Env.Park): its
// sessions write nothing as they go, so a turn costs what it costs with
// no store, and a session that stops because it is quiet (passivate.go)
// writes itself whole into the Park first — history, queues, rules,
// counters, usage, the model's own state, its last event number. The
// registry restores it from there on its next command and takes the
// record out, so a session is a live actor or a parked record, never
// both, and its events go on from the number they had reached.

// ParkNew makes the session of spec parked from the start: a record in
// the Park with nothing in it yet, which its first command starts as a
// new session (startUnstarted: session_created, events from 1). A
// session nobody has used yet is then that record, not a live actor with
// its buffers, and a burst of new sessions leaves no peak of actors
// behind it (issue 30, finding 24).
func ParkNew(env *Env, spec Spec) error {
	now := env.now()
	snap := &store.Snapshot{
		Session:  store.Session{State: string(fsm.Idle), CreatedAt: now, UpdatedAt: now},
		Volatile: store.Volatile{Unstarted: true},
	}
	return env.Park.Put(spec.ID, spec.Stored.Stored(spec.Stored.Model), snap)
}

// park writes the session whole into the Park; with a Store, whose
// writes hold it already, it does nothing.
func (s *session) park() error {
	lot := s.home.env.Park
	if s.home.env.Store != nil || lot == nil {
		return nil
	}
	msgs, start := s.hist.Whole()
	snap := &store.Snapshot{
		Session: store.Session{State: string(fsm.Idle), HistoryStart: start, Title: s.notes.title,
			Usage: s.notes.usage().total.proto(), EventSeq: s.out.log.LastSeq(), UpdatedAt: time.Unix(0, s.notes.updated)},
		Volatile: *s.volatile(),
		Messages: msgs,
	}
	return lot.Put(s.spec.ID, s.spec.Stored.Stored(s.spec.Stored.Model), snap)
}
