package tack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

// heldStore is an in-memory store whose writes fail while down, and whose
// next write, once hold has armed it, closes entered and waits for
// release before it goes on — to the store, or refused if down: a write
// a session started and then stopped under.
type heldStore struct {
	*memory.Store
	down             atomic.Bool
	armed            atomic.Bool
	entered, release chan struct{}
}

func newHeldStore() *heldStore {
	return &heldStore{Store: memory.New(), entered: make(chan struct{}), release: make(chan struct{})}
}

// hold arms the store: its next write waits for release.
func (h *heldStore) hold() { h.armed.Store(true) }

func (h *heldStore) Apply(ctx context.Context, id string, b *store.Batch) error {
	if h.armed.CompareAndSwap(true, false) {
		close(h.entered)
		<-h.release
		ctx = context.Background() // sent before its timeout, it lands however late
	}
	if h.down.Load() {
		return errors.New("connection refused")
	}
	return h.Store.Apply(ctx, id, b)
}

// storedSession is a runtime on st with a short request timeout, and
// session id on it, playing two text turns.
func storedSession(t *testing.T, st store.Store, id string, opts ...tack.Option) (*tack.Runtime, *tack.Session) {
	t.Helper()
	rt, err := tack.New(append([]tack.Option{tack.WithRequestTimeout(stopTimeout), tack.WithStore(st)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	s, err := rt.Spawn(tack.SessionConfig{ID: id, Script: json.RawMessage(`{"turns":[{"text":"hi"},{"text":"again"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	return rt, s
}

const stopTimeout = 5 * time.Second

// closing closes s on a goroutine of its own, and returns once the
// runtime no longer lists it (it is sent its Stop next) a channel closed
// once Close has returned.
func closing(t *testing.T, rt *tack.Runtime, s *tack.Session) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	eventually.Within(t, stopTimeout, func() error {
		if slices.Contains(rt.Sessions(), s.ID()) {
			return fmt.Errorf("session %s is still listed", s.ID())
		}
		return nil
	})
	return done
}

// hold is a plugin that holds its session in before_prompt until release
// is closed, after closing entered.
type hold struct{ entered, release chan struct{} }

func (hold) Name() string          { return "hold" }
func (hold) Priority() int         { return 1 }
func (hold) Hooks() []plugins.Hook { return []plugins.Hook{plugins.BeforePrompt} }
func (h hold) Handle(*plugins.Event) []plugins.Action {
	close(h.entered)
	<-h.release
	return nil
}

// heldSession is session "held" on a runtime of its own with no store,
// busy with a prompt that the plugin h holds in before_prompt: what is
// sent to it queues up until the test closes h.release.
func heldSession(t *testing.T) (*tack.Runtime, *tack.Session, hold) {
	t.Helper()
	h := hold{entered: make(chan struct{}), release: make(chan struct{})}
	rt, err := tack.New(tack.WithRequestTimeout(stopTimeout), tack.WithPluginBudget(time.Minute),
		tack.WithPlugins("hold", func(json.RawMessage) (plugins.Plugin, error) { return h, nil }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	s, err := rt.Spawn(tack.SessionConfig{ID: "held", Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`),
		Plugins: []plugins.Config{{Name: "hold"}}})
	if err != nil {
		t.Fatal(err)
	}
	return rt, s, h
}

// prompted sends a prompt that the plugin holds, and returns once it is
// held.
func (h hold) prompted(s *tack.Session) {
	go func() { _, _ = s.Prompt(context.Background(), "go") }()
	<-h.entered
}

// TestCommandBehindItsSessionsStop: a command that reaches a session's
// mailbox behind the Stop of its Close gets not_alive as the session
// stops, not at the end of its timeout: protoactor runs the Stop first
// and drops what is queued behind it, so the command used to wait the
// whole request timeout. A plugin holds the session in a prompt while
// the Stop and the command queue up.
func TestCommandBehindItsSessionsStop(t *testing.T) {
	rt, s, h := heldSession(t)
	h.prompted(s)
	stopped := closing(t, rt, s)
	start := time.Now()
	answered := make(chan error, 1)
	go func() { _, err := s.State(context.Background()); answered <- err }()
	time.Sleep(50 * time.Millisecond) // the Stop and the command queue up
	close(h.release)
	err := <-answered
	if d := time.Since(start); d > stopTimeout/2 {
		t.Errorf("a command behind its session's stop was answered after %v", d)
	}
	var te *tack.Error
	if !errors.As(err, &te) || te.Code != events.CodeNotAlive || te.Message != "the session stopped before it read the command" {
		t.Errorf("State behind the stop: %v, want not_alive: the session stopped before it read the command", err)
	}
	<-stopped
}

// TestClosedBehindItsSessionsStop: a Subscription and a Reader closed
// just as their session stops return at once, with C closed. Their
// Unsubscribe and LeaveFeed reach the session's mailbox behind its Stop,
// which protoactor runs first, dropping the messages behind it: a Close
// that waited for the session's answer waited out the request timeout.
// A plugin holds the session in a prompt while both queue up.
func TestClosedBehindItsSessionsStop(t *testing.T) {
	rt, s, h := heldSession(t)
	sub, err := s.Subscribe(t.Context(), tack.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Read(t.Context(), tack.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h.prompted(s)
	stopped := closing(t, rt, s)
	start := time.Now()
	closed := make(chan error, 2)
	go func() { closed <- sub.Close() }()
	go func() { closed <- r.Close() }()
	time.Sleep(50 * time.Millisecond) // the Stop and both messages queue up
	close(h.release)
	for range 2 {
		if err := <-closed; err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if d := time.Since(start); d > stopTimeout/2 {
		t.Errorf("closing a subscription and a reader behind their session's stop took %v", d)
	}
	<-stopped
	for range sub.C { // the events buffered before the stop, then the end
	}
	if _, err := r.Next(t.Context()); err != io.EOF {
		t.Errorf("Next after Close: %v, want io.EOF", err)
	}
}

// TestHeldCommandAnsweredAsItsSessionStops: a prompt held while the
// store is down, for a try at the store, hears not_alive as its session
// is closed during that try, instead of never hearing and waiting out
// its timeout.
func TestHeldCommandAnsweredAsItsSessionStops(t *testing.T) {
	st := newHeldStore()
	rt, s := storedSession(t, st, "down")
	ctx := context.Background()
	st.down.Store(true)
	if _, err := s.Prompt(ctx, "one"); tack.Code(err) != "store_failed" {
		t.Fatalf("prompt while the store fails: %v, want store_failed", err)
	}
	st.hold()
	answered := make(chan error, 1)
	start := time.Now()
	go func() { _, err := s.Prompt(ctx, "held"); answered <- err }()
	<-st.entered // the prompt is held, the try at the store under way
	closed := closing(t, rt, s)
	close(st.release) // the try fails: the store is still down
	err := <-answered
	if d := time.Since(start); d > stopTimeout/2 {
		t.Errorf("a prompt held while the store was down was answered %v after its session began to close", d)
	}
	var te *tack.Error
	if !errors.As(err, &te) || te.Code != events.CodeNotAlive || te.Message != "the session stopped while its store was down" {
		t.Errorf("held prompt: %v, want not_alive: the session stopped while its store was down", err)
	}
	<-closed
}

// TestCloseWaitsForTheWriteUnderWay: a session closed while a write is
// under way stops once that write has landed, and answers what it
// stored: the prompt the write holds is accepted, and the session,
// restored here at once, reads it from the store. Stopping without it let
// the write land after the restore had read the store, so the session
// and its store disagreed from then on, and the prompt refused as the
// session stopped stayed stored.
func TestCloseWaitsForTheWriteUnderWay(t *testing.T) {
	st := newHeldStore()
	rt, s := storedSession(t, st, "late")
	ctx := context.Background()
	st.hold()
	answered := make(chan error, 1)
	go func() { _, err := s.Prompt(ctx, "one"); answered <- err }()
	<-st.entered
	closed := closing(t, rt, s)
	close(st.release)
	if err := <-answered; err != nil {
		t.Fatalf("the prompt whose write landed as its session stopped: %v, want it accepted", err)
	}
	<-closed
	s, err := rt.Session("late")
	if err != nil {
		t.Fatal(err)
	}
	agree := func(when string) []string {
		t.Helper()
		live, err := s.Messages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := st.Load(ctx, "late")
		if err != nil {
			t.Fatal(err)
		}
		var l, stored []string
		for _, m := range live {
			l = append(l, m.Role+":"+m.Content)
		}
		for _, m := range snap.Messages {
			stored = append(stored, m.Role+":"+m.Content)
		}
		if !slices.Equal(l, stored) {
			t.Fatalf("%s: the session holds %q, its store %q", when, l, stored)
		}
		return l
	}
	restored := agree("restored")
	if len(restored) == 0 || restored[0] != "user:one" {
		t.Fatalf("restored with %q, want the accepted prompt first", restored)
	}
	// The replay may hold the first run's agent_end and answer (or the
	// restore's, when the close cut the first run short): wait for the
	// answer to "two" itself, after it, told once stored.
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"message_committed"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Prompt(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	for ev := range sub.C {
		if c := ev.GetMessageCommitted(); int(c.GetIndex()) == len(restored)+1 && c.GetMessage().GetRole() == "assistant" {
			break
		}
	}
	agree("after the next run")
}

// TestSubscribeGivenUpLeavesNoSink: a Subscribe or a Read whose caller
// gave up while the session's answer waited for a write leaves nothing
// attached, so the session passivates once quiet; the sink it had
// attached kept it loaded, fed, for nobody.
func TestSubscribeGivenUpLeavesNoSink(t *testing.T) {
	for _, read := range []bool{false, true} {
		t.Run(fmt.Sprintf("read=%v", read), func(t *testing.T) {
			st := newHeldStore()
			rt, s := storedSession(t, st, "orphan", tack.WithPassivateAfter(100*time.Millisecond))
			st.hold()
			prompted := make(chan error, 1)
			go func() { _, err := s.Prompt(context.Background(), "one"); prompted <- err }()
			<-st.entered // what the session answers now waits for this write
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			var err error
			if read {
				_, err = s.Read(ctx, tack.SubscribeOptions{})
			} else {
				_, err = s.Subscribe(ctx, tack.SubscribeOptions{})
			}
			cancel()
			if tack.Code(err) != events.CodeNotAlive {
				t.Fatalf("subscribing while the answer waits past the deadline: %v, want not_alive", err)
			}
			close(st.release)
			if err := <-prompted; err != nil {
				t.Fatal(err)
			}
			eventually.Within(t, stopTimeout, func() error {
				if rt.Loaded("orphan") {
					return errors.New("the session is still loaded, though quiet for longer than its passivation delay")
				}
				return nil
			})
		})
	}
}

// stuckStore is an in-memory store whose writes, once stuck, hang until
// release is closed, whatever their context says: a store that stopped
// answering.
type stuckStore struct {
	*memory.Store
	stuck   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *stuckStore) Apply(ctx context.Context, id string, b *store.Batch) error {
	if s.stuck.Load() {
		s.entered <- struct{}{}
		<-s.release
	}
	return s.Store.Apply(ctx, id, b)
}

// TestRuntimeCloseStopsSessionsTogether: closing a runtime whose store
// hangs, with a write under way in each of its sessions, takes about one
// session's wait for its write, not one after the other: every session is
// told to stop before any is waited for.
func TestRuntimeCloseStopsSessionsTogether(t *testing.T) {
	st := &stuckStore{Store: memory.New(), entered: make(chan struct{}, 8), release: make(chan struct{})}
	defer close(st.release)
	rt, err := tack.New(tack.WithRequestTimeout(time.Minute), tack.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	var sessions []*tack.Session
	for i := range n {
		s, err := rt.Spawn(tack.SessionConfig{ID: fmt.Sprintf("s%d", i), Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`)})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	st.stuck.Store(true)
	for _, s := range sessions {
		go func() { _, _ = s.Prompt(context.Background(), "go") }()
	}
	for range n {
		<-st.entered
	}
	start := time.Now()
	rt.Close()
	// Each session waits at most its write's timeout and a second (1.5 s
	// and 1 s, package actors) for the write: 2.5 s, 10 s for four in turn.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("closing %d sessions with their writes hung took %v", n, d)
	}
}

// hungLeases is a store whose lease calls, once hung, wait for their
// context as a store whose server stopped answering does.
type hungLeases struct {
	*memory.Store
	hung    atomic.Bool
	renewed chan struct{}
}

func (h *hungLeases) Renew(ctx context.Context, id, owner string, ttl time.Duration) error {
	if h.hung.Load() {
		select {
		case h.renewed <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return ctx.Err()
	}
	return h.Store.Renew(ctx, id, owner, ttl)
}

func (h *hungLeases) Release(ctx context.Context, id, owner string) error {
	if h.hung.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return h.Store.Release(ctx, id, owner)
}

// TestRuntimeCloseWithItsLeasesHung: closing a runtime whose store stopped
// answering while it renewed a lease takes a bounded time, whatever the
// number of sessions: Close neither waits out the renewal under way nor
// gives the leases up one after the other. (A cluster member dropped
// while its PostgreSQL was out of reach closes its runtime this way
// before it joins again.)
func TestRuntimeCloseWithItsLeasesHung(t *testing.T) {
	st := &hungLeases{Store: memory.New(), renewed: make(chan struct{}, 1)}
	rt, err := tack.New(tack.WithStore(st), tack.WithLeaseTTL(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	for i := range n {
		if _, err := rt.Spawn(tack.SessionConfig{ID: fmt.Sprintf("s%d", i), Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`)}); err != nil {
			t.Fatal(err)
		}
	}
	st.hung.Store(true)
	<-st.renewed
	closed := make(chan time.Duration)
	start := time.Now()
	go func() { rt.Close(); closed <- time.Since(start) }()
	// One lease's timeout (1.5 s, package placement) for the releases,
	// none for the renewal; 12 s for eight releases in turn, and for
	// ever before the calls had a timeout.
	select {
	case d := <-closed:
		if d > 5*time.Second {
			t.Errorf("closing %d sessions with their store hung took %v", n, d)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close still waits after 30 s")
	}
}

// heldRelease is a store whose next Release, once armed, waits for
// release.
type heldRelease struct {
	*memory.Store
	armed            atomic.Bool
	entered, release chan struct{}
}

func (h *heldRelease) Release(ctx context.Context, id, owner string) error {
	if h.armed.CompareAndSwap(true, false) {
		close(h.entered)
		<-h.release
	}
	return h.Store.Release(ctx, id, owner)
}

// TestCommandDuringCloseRestoresAfterTheLeaseIsGivenUp: a command that
// names a session while its Close gives up the lease waits for the close
// and restores the session after it. A restore in between took the lease
// (the same node's), which the Close then gave up: the restored session
// stayed loaded with no lease, and every write it tried was refused.
func TestCommandDuringCloseRestoresAfterTheLeaseIsGivenUp(t *testing.T) {
	st := &heldRelease{Store: memory.New(), entered: make(chan struct{}), release: make(chan struct{})}
	rt, err := tack.New(tack.WithStore(st), tack.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := t.Context()
	s, err := rt.Spawn(tack.SessionConfig{ID: "x", Script: json.RawMessage(`{"turns":[{"text":"one"},{"text":"two"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	runToEnd(t, s)
	st.armed.Store(true)
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	<-st.entered // the session has stopped; its lease is being given up
	state := make(chan error, 1)
	go func() { _, err := rt.State(ctx, "x"); state <- err }()
	time.Sleep(50 * time.Millisecond) // the command is in, waiting or restoring
	close(st.release)
	<-closed
	if err := <-state; err != nil {
		t.Fatalf("get_state during the close: %v", err)
	}
	if !rt.Loaded("x") {
		t.Fatal("the session is not loaded again after the command that named it")
	}
	again, err := rt.Session("x")
	if err != nil {
		t.Fatal(err)
	}
	runToEnd(t, again) // its prompt is a write: refused without the lease
}
