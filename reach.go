package tack

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
)

// reach is how a runtime gets to its sessions, chosen once in New:
//
//   - local: the sessions' actors run in this process. A handle holds its
//     session's PID, or, when sessions may be passivated
//     (WithPassivateAfter), only its id, and every command goes by id
//     through the registry, which restores the session first.
//   - remote: other processes host every session (WithSessionsElsewhere)
//     and this runtime is their front end; commands travel as events/v1
//     messages.
//
// Session and Runtime methods do what is common (checking ids and
// policy) and hand the rest to it; each topic's file (fork.go, export.go,
// lifecycle.go...) holds both ways of doing it, side by side, and
// local.go and elsewhere.go each reach's own plumbing.
type reach interface {
	// spawn creates the session cfg describes; cfg has its agent applied
	// and its id checked.
	spawn(cfg SessionConfig) (*Session, error)
	// importSession creates the session cfg describes with snap's
	// history (Import).
	importSession(ctx context.Context, cfg SessionConfig, snap *store.Snapshot) (*Session, error)
	// session returns the handle of session id (Runtime.Session).
	session(id string) (*Session, error)
	// send hands cmd to the session and returns its reply; the caller
	// has checked the policy.
	send(ctx context.Context, s *Session, cmd any) (*eventsv1.Reply, error)
	// switchModel makes the session's next request use model name.
	switchModel(ctx context.Context, s *Session, name string) error
	// subscribe feeds the session's events, filtered by f, into ch.
	subscribe(ctx context.Context, s *Session, ch *events.Channel, f events.Filter, opt SubscribeOptions) (*Subscription, error)
	// read starts a reader of the session's events that f matches
	// (Read).
	read(ctx context.Context, s *Session, f events.Filter, opt SubscribeOptions) (*Reader, error)
	// subscribePID makes an actor a subscriber of the session.
	subscribePID(ctx context.Context, s *Session, pid *actor.PID, since uint64, f events.Filter) error
	// fork makes a session of the session's history up to index (Fork);
	// newID is checked.
	fork(ctx context.Context, s *Session, index int, newID string) (*Session, error)
	// export returns the session as one document (Export).
	export(ctx context.Context, s *Session) (*eventsv1.SessionExport, error)
	// delete removes session id for good (Delete).
	delete(ctx context.Context, id string) error
	// close stops session id (Session.Close).
	close(ctx context.Context, id string) error
	// page reads a page of the session list.
	page(ctx context.Context, p store.Page) (*store.Listing, error)
	// sweep deletes the stored sessions older than maxAge that are not in
	// use (Sweep).
	sweep(ctx context.Context, maxAge time.Duration) ([]string, error)
}

// newReach picks how rt reaches its sessions.
func newReach(rt *Runtime, e Elsewhere) reach {
	if e != nil {
		return remote{rt: rt, e: e}
	}
	return &local{rt: rt, passivates: rt.env.Passivates()}
}
