package tack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/fsm"
	"github.com/tack-run/tack/placement"
	"github.com/tack-run/tack/store"
)

// The life of a stored session — record, lease, restore, renewal — is kept
// by placement.Registry; this file turns a stored configuration into a spec
// and registry errors into protocol errors, and answers the reads that
// name a session by id.

// DefaultLeaseTTL is how long a node owns a stored session without
// renewing its lease; the runtime renews every third of it.
const DefaultLeaseTTL = actors.DefaultLeaseTTL

// defaultNode names this process as a session owner.
func defaultNode() string {
	host, _ := os.Hostname()
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// close stops a session and gives up its lease.
func (l *local) close(ctx context.Context, id string) error {
	u := UserOf(ctx)
	if !l.rt.registry.CloseOwned(id, u) && u != "" {
		if owner, loaded := l.rt.registry.User(id); loaded && owner != u {
			return registryError(id, placement.ErrNoSession)
		}
	}
	return nil
}

// Release hands session id over to whoever uses it next, in this process
// or another: once everything it has told is stored, it stops and gives
// up its lease, staying stored. A session being restored here is handed
// over as soon as the restore is done (what was sent to it meanwhile is
// answered with a dead letter: not done). It reports whether the session
// was loaded or being restored here. Cluster members (package
// server/remote) release a session that moves to another member.
func (rt *Runtime) Release(id string) bool {
	return rt.registry.Release(id)
}

// respec resolves a stored session's configuration, for a restore.
func (rt *Runtime) respec(id string, cfg SessionConfig) (actors.Spec, error) {
	return rt.storedSpec(id, cfg, drop)
}

// storedSpec resolves the stored configuration of session id.
func (rt *Runtime) storedSpec(id string, cfg SessionConfig, mode check) (actors.Spec, error) {
	spec, err := rt.spec(id, cfg, mode)
	if err == nil {
		rt.noteGroups(id, cfg.Tools)
	}
	return spec, err
}

// registryError maps an error of the registry or the store to a protocol
// error; errors that are protocol errors already pass.
func registryError(id string, err error) error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, placement.ErrSessionExists):
		return &Error{Code: events.CodeBadRequest, Message: fmt.Sprintf("session %q exists", id)}
	case errors.Is(err, placement.ErrNoSession), errors.Is(err, store.ErrNotFound):
		return &Error{Code: events.CodeInvalidSession, Message: fmt.Sprintf("no session %q", id)}
	case errors.Is(err, store.ErrOwned), errors.Is(err, placement.ErrReleased):
		return &Error{Code: events.CodeNotAlive, Message: err.Error()}
	case errors.Is(err, store.ErrInvalid):
		return &Error{Code: events.CodeBadRequest, Message: err.Error()}
	}
	return &Error{Code: events.CodeInternal, Message: err.Error()}
}

// State answers get_state for session id; a stored session is restored
// first, so the answer is the session as it is once restored.
func (rt *Runtime) State(ctx context.Context, id string) (*eventsv1.SessionState, error) {
	s, err := rt.Session(id)
	if err != nil {
		return nil, err
	}
	return s.State(ctx)
}

// Messages answers get_messages for session id, like State.
func (rt *Runtime) Messages(ctx context.Context, id string) ([]*eventsv1.Message, error) {
	s, err := rt.Session(id)
	if err != nil {
		return nil, err
	}
	msgs, err := s.Messages(ctx)
	if msgs == nil && err == nil {
		msgs = []*eventsv1.Message{}
	}
	return msgs, err
}

// ListOptions select the sessions List returns.
type ListOptions struct {
	// Limit is the page size (default 100, at most 1000).
	Limit int
	// Cursor is the previous page's next; empty for the first page.
	Cursor string
	// User, when not empty, lists only that user's sessions.
	User string
}

// List returns a page of sessions, most recently updated first,
// opt.Limit at a time: with a store, every stored session (of opt.User
// when set); without one, the loaded sessions and the parked ones
// (WithPassivateAfter). Loaded sessions report their live state; a
// stored session that a crash cut short is restored to be listed, so no
// listed state contradicts get_state. updated_at is, with a store, when
// the store last wrote the session (the order of the list); without one,
// when the session last changed, by the runtime's clock. A cursor that no
// page gave is bad_request.
func (rt *Runtime) List(ctx context.Context, opt ListOptions) (*eventsv1.SessionList, error) {
	if rt.env.Store == nil {
		return rt.listUnstored(ctx, opt)
	}
	page, err := rt.reach.page(ctx, store.Page{Limit: opt.Limit, Cursor: opt.Cursor, User: opt.User})
	if errors.Is(err, store.ErrInvalid) {
		return nil, &Error{Code: events.CodeBadRequest, Message: err.Error()}
	}
	if err != nil {
		return nil, &Error{Code: events.CodeInternal, Message: err.Error()}
	}
	list := &eventsv1.SessionList{Sessions: []*eventsv1.SessionSummary{}}
	for _, s := range page.Sessions {
		sum := rt.liveSummary(ctx, s.ID)
		if sum == nil {
			sum = storedSummary(s)
		}
		sum.UpdatedAt = eventjson.Timestamp(s.UpdatedAt)
		list.Sessions = append(list.Sessions, sum)
	}
	list.Next = page.Next
	return list, nil
}

// listUnstored is List for a runtime without a store: its loaded
// sessions and, when it parks them, the parked ones, ordered and paged as
// a store's list is (store.Cursor).
func (rt *Runtime) listUnstored(ctx context.Context, opt ListOptions) (*eventsv1.SessionList, error) {
	var after *store.Cursor
	if opt.Cursor != "" {
		c, err := store.DecodeCursor(opt.Cursor)
		if err != nil {
			return nil, &Error{Code: events.CodeBadRequest, Message: err.Error()}
		}
		after = &c
	}
	type listed struct {
		at  time.Time
		sum *eventsv1.SessionSummary
	}
	var all []listed
	add := func(sum *eventsv1.SessionSummary) {
		at, err := time.Parse(time.RFC3339Nano, sum.UpdatedAt)
		if err == nil && (after == nil || after.Follows(at, sum.Session)) {
			all = append(all, listed{at, sum})
		}
	}
	// The sessions whose actors answer, the parked ones, then those that
	// answer again: a session that parks after the first look is in the
	// Park before its actor stops answering (Registry.Actors), and one
	// that wakes after the Park was read answers at the second look; a
	// session listed as it answered is not listed parked too.
	loaded := map[string]bool{}
	addLoaded := func() {
		for _, a := range rt.registry.Actors() {
			if loaded[a.ID] || opt.User != "" && a.User != opt.User {
				continue
			}
			if sum := rt.summary(ctx, a.PID); sum != nil {
				loaded[a.ID] = true
				add(sum)
			}
		}
	}
	addLoaded()
	var parked []*store.Session
	if err := rt.eachParked(ctx, opt.User, func(s *store.Session) { parked = append(parked, s) }); err != nil {
		return nil, err
	}
	addLoaded()
	for _, s := range parked {
		if !loaded[s.ID] {
			add(storedSummary(s))
		}
	}
	slices.SortFunc(all, func(a, b listed) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(b.sum.Session, a.sum.Session)
	})
	n := store.Page{Limit: opt.Limit}.Size()
	list := &eventsv1.SessionList{Sessions: []*eventsv1.SessionSummary{}}
	for _, l := range all[:min(n, len(all))] {
		list.Sessions = append(list.Sessions, l.sum)
	}
	if len(all) > n {
		last := all[n-1]
		list.Next = store.EncodeCursor(store.Cursor{Updated: last.at, ID: last.sum.Session})
	}
	return list, nil
}

// eachParked calls f with each parked session (of user, when set) of a
// runtime without a store that passivates.
func (rt *Runtime) eachParked(ctx context.Context, user string, f func(*store.Session)) error {
	if rt.env.Park == nil {
		return nil
	}
	p := store.Page{Limit: store.MaxPageSize, User: user}
	for {
		page, err := rt.env.Park.List(ctx, p)
		if err != nil {
			return &Error{Code: events.CodeInternal, Message: err.Error()}
		}
		for _, s := range page.Sessions {
			f(s)
		}
		if page.Next == "" {
			return nil
		}
		p.Cursor = page.Next
	}
}

// storedSummary is the list_sessions entry of a session not loaded.
func storedSummary(s *store.Session) *eventsv1.SessionSummary {
	return &eventsv1.SessionSummary{Session: s.ID, State: s.State, Model: s.Config.Model, MessageCount: int32(s.MessageCount),
		Title: s.Title, UpdatedAt: eventjson.Timestamp(s.UpdatedAt)}
}

// page reads a page of the store's list. A session a crash cut short is
// restored first, so that its record tells the state it is in once
// restored.
func (l *local) page(ctx context.Context, p store.Page) (*store.Listing, error) {
	return l.rt.registry.Page(ctx, p)
}

// page reads a page of the store's list; a session a crash cut short is
// asked for its state where it lives, which restores it there.
func (r remote) page(ctx context.Context, p store.Page) (*store.Listing, error) {
	rt := r.rt
	page, err := rt.env.Store.List(ctx, p)
	if err != nil {
		return nil, err
	}
	for i, s := range page.Sessions {
		if s.State == string(fsm.Idle) {
			continue
		}
		if st, err := (&Session{id: s.ID, rt: rt}).State(ctx); err == nil {
			page.Sessions[i].State, page.Sessions[i].MessageCount = st.State, int(st.MessageCount)
		}
	}
	return page, nil
}

// liveSummary describes a loaded session, or returns nil.
func (rt *Runtime) liveSummary(ctx context.Context, id string) *eventsv1.SessionSummary {
	pid, ok := rt.registry.Lookup(id)
	if !ok {
		return nil
	}
	return rt.summary(ctx, pid)
}

// summary asks the actor pid for its session's list_sessions entry; nil
// when it does not answer.
func (rt *Runtime) summary(ctx context.Context, pid *actor.PID) *eventsv1.SessionSummary {
	r, err := rt.request(ctx, pid, &actors.GetSummary{})
	if sums := r.GetSessions().GetSessions(); err == nil && len(sums) == 1 {
		return sums[0]
	}
	return nil
}

// User returns the user session id belongs to ("" for nobody in
// particular), or invalid_session when there is no such session. A loaded
// session answers from memory (a user never changes), so a command such
// as abort is not held up behind the store's writes; a session that is
// not loaded is read from its stored record, never restored. (So the time
// it takes tells whether a session is loaded here, not whose it is.)
func (rt *Runtime) User(ctx context.Context, id string) (string, error) {
	if u, ok := rt.registry.Owner(id); ok {
		return u, nil
	}
	st := rt.env.Unloaded()
	if st == nil {
		return "", registryError(id, placement.ErrNoSession)
	}
	snap, err := st.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		// Woken from its record as it was read: registered now.
		if u, ok := rt.registry.Owner(id); ok {
			return u, nil
		}
	}
	if errors.Is(err, store.ErrInvalid) { // an id no session can have
		err = placement.ErrNoSession
	}
	if err != nil {
		return "", registryError(id, err)
	}
	return snap.Config.User, nil
}
