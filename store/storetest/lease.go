package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack/store"
)

func testOwnership(t *testing.T, e *env) {
	e.create(t, "s1")
	const ttl = 30 * time.Second
	type step struct {
		name    string
		advance time.Duration
		call    func() error
		wantErr error
		owner   string // holder afterwards; "" none
		expires time.Duration
	}
	acquire := func(o string) func() error { return func() error { return e.st.Acquire(e.ctx, "s1", o, ttl) } }
	renew := func(o string) func() error { return func() error { return e.st.Renew(e.ctx, "s1", o, ttl) } }
	release := func(o string) func() error { return func() error { return e.st.Release(e.ctx, "s1", o) } }
	start := e.clock.Now().Truncate(time.Microsecond)
	steps := []step{
		{"a acquires", 0, acquire("a"), nil, "a", ttl},
		{"b is refused", time.Second, acquire("b"), store.ErrOwned, "a", ttl},
		{"b cannot renew", 0, renew("b"), store.ErrOwned, "a", ttl},
		{"b cannot release", 0, release("b"), store.ErrOwned, "a", ttl},
		{"a re-acquires, extending", time.Second, acquire("a"), nil, "a", 2*time.Second + ttl},
		{"a renews", time.Second, renew("a"), nil, "a", 3*time.Second + ttl},
		{"still refused just before expiry", ttl - time.Microsecond, acquire("b"), store.ErrOwned, "a", 3*time.Second + ttl},
		{"a renews an expired lease nobody took", time.Second, renew("a"), nil, "a", 4*time.Second + 2*ttl - time.Microsecond},
		{"b takes over at expiry", ttl, acquire("b"), nil, "b", 4*time.Second + 3*ttl - time.Microsecond},
		{"a lost it: renew fails", 0, renew("a"), store.ErrOwned, "b", 4*time.Second + 3*ttl - time.Microsecond},
		{"b releases", 0, release("b"), nil, "", 0},
		{"release when nobody holds is a no-op", 0, release("b"), nil, "", 0},
		{"renew after release fails", 0, renew("b"), store.ErrOwned, "", 0},
		{"a acquires a released lease", 0, acquire("a"), nil, "a", 4*time.Second + 2*ttl - time.Microsecond + ttl},
	}
	for _, st := range steps {
		e.clock.Advance(st.advance)
		err := st.call()
		if !errors.Is(err, st.wantErr) || (st.wantErr == nil) != (err == nil) {
			t.Fatalf("%s: err = %v, want %v", st.name, err, st.wantErr)
		}
		var oe *store.OwnedError
		if errors.As(err, &oe) && (oe.Owner != st.owner || oe.Session != "s1") {
			t.Fatalf("%s: OwnedError names %q/%q, want holder %q", st.name, oe.Session, oe.Owner, st.owner)
		}
		snap, err := e.st.Get(e.ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		var want time.Time
		if st.owner != "" {
			want = start.Add(st.expires)
		}
		if snap.Owner != st.owner || !snap.LeaseExpires.Equal(want) {
			t.Fatalf("%s: lease %q until %v, want %q until %v", st.name, snap.Owner, snap.LeaseExpires, st.owner, want)
		}
		if !snap.UpdatedAt.Equal(start) {
			t.Fatalf("%s: a lease change moved UpdatedAt to %v", st.name, snap.UpdatedAt)
		}
	}
	err := e.st.Acquire(e.ctx, "s1", "b", ttl)
	if err == nil || !containsAll(err.Error(), "s1", `"a"`) {
		t.Fatalf("ErrOwned message %q should name the session and the holder", err)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func testOwnershipInvalid(t *testing.T, e *env) {
	e.create(t, "s1")
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"acquire empty owner", func() error { return e.st.Acquire(e.ctx, "s1", "", time.Minute) }},
		{"acquire zero ttl", func() error { return e.st.Acquire(e.ctx, "s1", "a", 0) }},
		{"renew negative ttl", func() error { return e.st.Renew(e.ctx, "s1", "a", -time.Second) }},
		{"release empty owner", func() error { return e.st.Release(e.ctx, "s1", "") }},
		{"acquire empty id", func() error { return e.st.Acquire(e.ctx, "", "a", time.Minute) }},
	} {
		t.Run(tc.name, func(t *testing.T) { wantErr(t, tc.name, tc.call(), store.ErrInvalid) })
	}
}

func testFencedApply(t *testing.T, e *env) {
	e.create(t, "s1")
	const ttl = time.Minute
	wantErr(t, "fenced Apply without a lease", e.st.Apply(e.ctx, "s1", &store.Batch{Owner: "a", Messages: msgs(0, 1)}), store.ErrOwned)
	if err := e.st.Acquire(e.ctx, "s1", "a", ttl); err != nil {
		t.Fatal(err)
	}
	e.apply(t, "s1", &store.Batch{Owner: "a", Messages: msgs(0, 1)})
	e.clock.Advance(2 * ttl)
	e.apply(t, "s1", &store.Batch{Owner: "a", From: 1, Messages: msgs(1, 1)}) // expired, but nobody took it
	if err := e.st.Acquire(e.ctx, "s1", "b", ttl); err != nil {
		t.Fatal(err)
	}
	before := e.load(t, "s1")
	err := e.st.Apply(e.ctx, "s1", &store.Batch{Owner: "a", From: 2, Messages: msgs(2, 1), State: "running"})
	wantErr(t, "Apply by the old owner", err, store.ErrOwned)
	var oe *store.OwnedError
	if !errors.As(err, &oe) || oe.Owner != "b" {
		t.Fatalf("fenced Apply error %v should name b", err)
	}
	wantSame(t, "after the fenced Apply", e.load(t, "s1"), before)
	e.apply(t, "s1", &store.Batch{Owner: "b", From: 2, Messages: msgs(2, 1)})
	e.apply(t, "s1", &store.Batch{From: 3, Messages: msgs(3, 1)}) // unfenced writes are not checked
	wantMessages(t, "history", e.load(t, "s1").Messages, msgs(0, 4))
}

func testRacingAcquire(t *testing.T, e *env) {
	e.create(t, "s1")
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = e.st.Acquire(e.ctx, "s1", fmt.Sprintf("node-%d", i), time.Minute) })
	}
	wg.Wait()
	winners := 0
	for i, err := range errs {
		switch {
		case err == nil:
			winners++
		case !errors.Is(err, store.ErrOwned):
			t.Fatalf("node-%d: %v", i, err)
		}
	}
	if winners != 1 {
		t.Fatalf("%d owners won the race, want 1", winners)
	}
}
