package tack_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/internal/hosting"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

// TestLeaseWait: a node whose restore meets another node's lease waits
// for it (WithLeaseWait) — until the holder releases the session or its
// lease expires — instead of answering not_alive at once; without the
// option, or past the wait, not_alive stands.
func TestLeaseWait(t *testing.T) {
	clock := &manualClock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	mem := memory.New(store.WithClock(clock.Now))
	node := func(name string, opts ...tack.Option) *tack.Runtime {
		rt, err := tack.New(append([]tack.Option{tack.WithStore(mem), tack.WithNode(name), tack.WithLeaseTTL(time.Minute)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(rt.Close)
		return rt
	}
	a := node("a")
	for _, id := range []string{"released", "expired", "held", "moved"} {
		if _, err := a.Spawn(tack.SessionConfig{ID: id, Script: json.RawMessage(`{"turns":[{"text":"Done."}]}`)}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("no wait", func(t *testing.T) {
		if _, err := node("b0").Session("held"); tack.Code(err) != events.CodeNotAlive {
			t.Fatalf("got %v, want not_alive", err)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		start := time.Now()
		if _, err := node("b1", tack.WithLeaseWait(300*time.Millisecond)).Session("held"); tack.Code(err) != events.CodeNotAlive {
			t.Fatalf("got %v, want not_alive", err)
		}
		if waited := time.Since(start); waited < 300*time.Millisecond-leasePollMargin {
			t.Fatalf("gave up after %v, before the 300 ms wait", waited)
		}
	})

	b := node("b", tack.WithLeaseWait(time.Minute))
	t.Run("released", func(t *testing.T) {
		got := make(chan error, 1)
		go func() { _, err := b.Session("released"); got <- err }()
		select {
		case err := <-got:
			t.Fatalf("took a held session: %v", err)
		default:
		}
		if !a.Release("released") || a.Loaded("released") {
			t.Fatal("a did not release the session")
		}
		if err := <-got; err != nil || !b.Loaded("released") {
			t.Fatalf("after the release: %v (loaded %v)", err, b.Loaded("released"))
		}
	})
	// Released while b restores it (a cluster member whose grain of the
	// session stopped, the session having moved): once the restore is
	// done b hands it over — the request that waited is answered with a
	// dead letter (not done), and b neither keeps it loaded nor holds its
	// lease, which a third node then takes without waiting.
	t.Run("released while restoring", func(t *testing.T) {
		host := hosting.Of(b) // what server/remote's grains do with a command
		f := actor.NewFuture(host.System(), time.Minute)
		host.Deliver("moved", &actor.MessageEnvelope{Message: &eventsv1.GetState{}, Sender: f.PID()})
		if !b.Release("moved") {
			t.Fatal("b's Release does not see the restore under way")
		}
		if !a.Release("moved") {
			t.Fatal("a did not release the session")
		}
		if res, err := f.Result(); !errors.Is(err, actor.ErrDeadLetter) {
			t.Fatalf("the request that waited got %v, %v; want a dead letter", res, err)
		}
		c := node("c")
		eventually.Within(t, 10*time.Second, func() error {
			if _, err := c.Session("moved"); err != nil {
				return fmt.Errorf("b kept the lease: %w", err)
			}
			return nil
		})
		if b.Loaded("moved") || !c.Loaded("moved") {
			t.Fatalf("loaded on b %v, on c %v; want c only", b.Loaded("moved"), c.Loaded("moved"))
		}
	})
	t.Run("expired", func(t *testing.T) {
		got := make(chan error, 1)
		go func() { _, err := b.Session("expired"); got <- err }()
		clock.Set(clock.Now().Add(2 * time.Minute)) // a's leases lapse (a renews by the real clock, a minute on)
		if err := <-got; err != nil || !b.Loaded("expired") {
			t.Fatalf("after the lease expired: %v", err)
		}
	})
}

// leasePollMargin allows for the granularity of timers.
const leasePollMargin = 20 * time.Millisecond
