package tack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/internal/eventually"
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

// stopWriteRuntime is a runtime on st with a short request timeout, and
// session id on it, playing two text turns.
func stopWriteRuntime(t *testing.T, st store.Store, id string, opts ...tack.Option) (*tack.Runtime, *tack.Session) {
	t.Helper()
	rt, err := tack.New(append([]tack.Option{tack.WithRequestTimeout(stopWriteTimeout), tack.WithStore(st)}, opts...)...)
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

const stopWriteTimeout = 5 * time.Second

// closing closes s on a goroutine of its own and returns once the
// runtime no longer lists it (it is being stopped) and a closed channel
// once Close has returned.
func closing(t *testing.T, rt *tack.Runtime, s *tack.Session) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	eventually.Within(t, stopWriteTimeout, func() error {
		if slices.Contains(rt.Sessions(), s.ID()) {
			return fmt.Errorf("session %s is still listed", s.ID())
		}
		return nil
	})
	return done
}

// TestHeldCommandAnsweredAsItsSessionStops: a prompt held while the
// store is down, for a try at the store, hears not_alive as its session
// is closed during that try, instead of never hearing and waiting out
// its timeout.
func TestHeldCommandAnsweredAsItsSessionStops(t *testing.T) {
	st := newHeldStore()
	rt, s := stopWriteRuntime(t, st, "down")
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
	if d := time.Since(start); d > stopWriteTimeout/2 {
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
	rt, s := stopWriteRuntime(t, st, "late")
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
	if got := agree("restored"); len(got) == 0 || got[0] != "user:one" {
		t.Fatalf("restored with %q, want the accepted prompt first", got)
	}
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Prompt(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	<-sub.C
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
			rt, s := stopWriteRuntime(t, st, "orphan", tack.WithPassivateAfter(100*time.Millisecond))
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
			eventually.Within(t, stopWriteTimeout, func() error {
				if rt.Loaded("orphan") {
					return errors.New("the session is still loaded, though quiet for longer than its passivation delay")
				}
				return nil
			})
		})
	}
}
