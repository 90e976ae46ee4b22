package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
)

func TestBatchValidate(t *testing.T) {
	msg := &eventsv1.Message{Role: "user"}
	tests := []struct {
		name  string
		batch *store.Batch
		ok    bool
	}{
		{"empty", &store.Batch{}, true},
		{"messages", &store.Batch{From: 3, Messages: []*eventsv1.Message{msg, msg}}, true},
		{"rewrite", &store.Batch{Rewrite: true, Messages: []*eventsv1.Message{msg}}, true},
		{"everything", &store.Batch{Owner: "n", State: "idle", Usage: &eventsv1.Usage{}, EventSeq: 1,
			Config: &store.Config{Spec: []byte(` {"tools": []}`)}, Volatile: &store.Volatile{}}, true},
		{"nil", nil, false},
		{"negative From", &store.Batch{From: -1}, false},
		{"negative history start", &store.Batch{HistoryStart: -1}, false},
		{"nil message", &store.Batch{Messages: []*eventsv1.Message{msg, nil}}, false},
		{"settings not JSON", &store.Batch{Config: &store.Config{Spec: []byte(`{`)}}, false},
		{"settings not an object", &store.Batch{Config: &store.Config{Spec: []byte(`[]`)}}, false},
		{"settings not UTF-8", &store.Batch{Config: &store.Config{Spec: []byte("{\"system\":\"\xff\"}")}}, false},
		{"NUL in model", &store.Batch{Config: &store.Config{Model: "m\x00"}}, false},
		{"NUL in state", &store.Batch{State: "a\x00"}, false},
		{"owner not UTF-8", &store.Batch{Owner: "\xff"}, false},
		{"nil steering item", &store.Batch{Volatile: &store.Volatile{SteeringQueue: []*eventsv1.SteeringItem{nil}}}, false},
		{"nil approval", &store.Batch{Volatile: &store.Volatile{Approvals: []store.Approval{{}}}}, false},
		{"nil question", &store.Batch{Volatile: &store.Volatile{Question: &store.Question{}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.batch.Validate()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, store.ErrInvalid)) {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestBatchCount(t *testing.T) {
	two := make([]*eventsv1.Message, 2)
	tests := []struct {
		name   string
		batch  store.Batch
		stored int
		want   int
	}{
		{"append", store.Batch{From: 3, Messages: two}, 3, 5},
		{"overlap", store.Batch{From: 2, Messages: two}, 3, 4},
		{"all stored", store.Batch{From: 0, Messages: two}, 3, 3},
		{"no messages", store.Batch{}, 3, 3},
		{"rewrite shrinks", store.Batch{Rewrite: true, Messages: two}, 9, 2},
		{"rewrite to empty", store.Batch{Rewrite: true}, 9, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.batch.Count(tc.stored); got != tc.want {
				t.Fatalf("Count(%d) = %d, want %d", tc.stored, got, tc.want)
			}
		})
	}
}

func TestOwnedError(t *testing.T) {
	until := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		err  *store.OwnedError
		want []string
	}{
		{"held", &store.OwnedError{Session: "s1", Owner: "node-b", Expires: until}, []string{"s1", `"node-b"`, "2025-01-02T03:04:05Z"}},
		{"no lease", &store.OwnedError{Session: "s1"}, []string{"s1", "no lease"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error = tc.err
			if !errors.Is(err, store.ErrOwned) || errors.Is(err, store.ErrNotFound) {
				t.Fatal("errors.Is(ErrOwned) must hold, and only it")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("%q lacks %q", err, w)
				}
			}
		})
	}
}

func TestChecks(t *testing.T) {
	tests := []struct {
		name string
		err  error
		ok   bool
	}{
		{"id", store.CheckID("s1"), true},
		{"empty id", store.CheckID(""), false},
		{"NUL id", store.CheckID("s\x00"), false},
		{"lease", store.CheckLease("n", time.Second), true},
		{"empty owner", store.CheckLease("", time.Second), false},
		{"zero ttl", store.CheckLease("n", 0), false},
		{"owner", store.CheckOwner("n"), true},
		{"text", store.CheckText("x", "héllo"), true},
		{"bad text", store.CheckText("x", "\xc3"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if (tc.err == nil) != tc.ok || (tc.err != nil && !errors.Is(tc.err, store.ErrInvalid)) {
				t.Fatalf("err = %v, want ok=%v", tc.err, tc.ok)
			}
		})
	}
}

func TestPageSize(t *testing.T) {
	for _, tc := range []struct{ limit, want int }{
		{0, store.DefaultPageSize}, {-5, store.DefaultPageSize}, {7, 7}, {store.MaxPageSize + 1, store.MaxPageSize},
	} {
		if got := (store.Page{Limit: tc.limit}).Size(); got != tc.want {
			t.Errorf("Size(%d) = %d, want %d", tc.limit, got, tc.want)
		}
	}
}

func TestOptions(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.FixedZone("X", 3600))
	o := store.NewOptions(store.WithClock(func() time.Time { return at }))
	got := o.Now()
	if !got.Equal(at.Truncate(time.Microsecond)) || got.Location() != time.UTC {
		t.Fatalf("Now() = %v", got)
	}
	if store.NewOptions(store.WithClock(nil)).Clock == nil {
		t.Fatal("WithClock(nil) removed the clock")
	}
}
