package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/actors"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/postgres"
	"github.com/tack-run/tack/store/postgres/pgtest"
	"github.com/tack-run/tack/store/sqlite"
)

// TestCompactedSessionRestored: a session with context options, compacted
// and closed, comes back from SQLite or PostgreSQL in a new runtime with
// its options (max_messages trims its next request, keep_recent bounds
// its next compaction), its working history summary first, and
// get_messages all in order with its compacted and summary marks; it
// compacts again, and a third runtime restores that too.
func TestCompactedSessionRestored(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) func() store.Store
	}{
		{"sqlite", func(t *testing.T) func() store.Store {
			path := filepath.Join(t.TempDir(), "tack.db")
			return func() store.Store {
				st, err := sqlite.Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
		}},
		{"postgres", func(t *testing.T) func() store.Store {
			dsn := pgtest.DSN(t)
			return func() store.Store {
				st, err := postgres.Open(context.Background(), dsn)
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restoreCompacted(t, tc.open(t))
		})
	}
}

func restoreCompacted(t *testing.T, open func() store.Store) {
	ctx := t.Context()
	script := `{"turns":[{"text":"a1"},{"text":"a2"},{"text":"a3"},{"text":"s1"},{"text":"a4"},{"text":"s2"},{"text":"a5"}]}`
	cfg := &llm.ContextConfig{MaxMessages: 3, KeepRecent: new(2)}
	summary := func(s string) string { return "user:" + actors.SummaryPrefix + s }

	// The first runtime: three runs, then a compaction of all but two.
	run(t, open, func(rt *tack.Runtime, s *tack.Session) {
		for i, p := range []string{"p1", "p2", "p3"} {
			promptAndWait(t, rt, "s", p, fmt.Sprintf("r-%d", i+1))
		}
		if removed := compactAndWait(t, s); removed != 4 {
			t.Fatalf("removed_count %d, want 4", removed)
		}
	}, tack.SessionConfig{ID: "s", Script: json.RawMessage(script), Context: cfg})

	firstAll := []string{"user:p1 compacted", "assistant:a1 compacted", "user:p2 compacted", "assistant:a2 compacted",
		summary("s1") + " summary", "user:p3", "assistant:a3"}
	// The second: restored as it was, with its options.
	run(t, open, func(rt *tack.Runtime, s *tack.Session) {
		checkMessages(t, s, []string{summary("s1"), "user:p3", "assistant:a3"}, firstAll)
		sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"request_start"}})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		promptAndWait(t, rt, "s", "p4", "r-4")
		ev := <-sub.C
		for ev.GetEventsLost() != nil { // the numbering gap of the restart comes first
			ev = <-sub.C
		}
		if ev.GetRequestStart().GetMessageCount() != 3 {
			t.Fatalf("request after the restart: %v, want 3 messages (max_messages kept)", ev)
		}
		if removed := compactAndWait(t, s); removed != 3 {
			t.Fatalf("second removed_count %d, want 3 (keep_recent kept)", removed)
		}
	}, tack.SessionConfig{})

	// The third: both compactions kept.
	secondAll := []string{"user:p1 compacted", "assistant:a1 compacted", "user:p2 compacted", "assistant:a2 compacted",
		summary("s1") + " summary compacted", "user:p3 compacted", "assistant:a3 compacted",
		summary("s2") + " summary", "user:p4", "assistant:a4"}
	run(t, open, func(rt *tack.Runtime, s *tack.Session) {
		checkMessages(t, s, []string{summary("s2"), "user:p4", "assistant:a4"}, secondAll)
		promptAndWait(t, rt, "s", "p5", "r-5")
		msgs, err := s.Messages(ctx)
		if err != nil || roles(msgs)[len(msgs)-1] != "assistant:a5" {
			t.Fatalf("after the third restart the script answered %v, %v; want a5", roles(msgs), err)
		}
	}, tack.SessionConfig{})
}

// run opens the store, runs f on session s in a runtime of its own —
// spawned from spawn when it has an ID, else restored — and closes both.
func run(t *testing.T, open func() store.Store, f func(*tack.Runtime, *tack.Session), spawn tack.SessionConfig) {
	t.Helper()
	st := open()
	defer func() {
		if c, ok := st.(interface{ Close() error }); ok {
			c.Close()
		}
	}()
	rt, err := tack.New(tack.WithStore(st), tack.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	var s *tack.Session
	if spawn.ID != "" {
		s, err = rt.Spawn(spawn)
	} else {
		s, err = rt.Session("s")
	}
	if err != nil {
		t.Fatal(err)
	}
	f(rt, s)
}

// compactAndWait sends compact and returns compact_end's removed_count;
// an error event fails the test.
func compactAndWait(t *testing.T, s *tack.Session) int32 {
	t.Helper()
	sub, err := s.Subscribe(t.Context(), tack.SubscribeOptions{Types: []string{"compact_end", "error"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := s.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-sub.C:
			switch {
			case ev.GetError() != nil:
				t.Fatalf("compaction: %v", ev.GetError())
			case ev.GetCompactEnd() != nil:
				return ev.GetCompactEnd().GetRemovedCount()
			}
		case <-deadline:
			t.Fatal("no compact_end")
		}
	}
}

// checkMessages compares the working history and get_messages all, each
// message as role:content and its marks.
func checkMessages(t *testing.T, s *tack.Session, working, all []string) {
	t.Helper()
	msgs, err := s.Messages(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := roles(msgs); !slices.Equal(got, working) || !msgs[0].Summary {
		t.Fatalf("restored working history %q (summary first: %v), want %q", got, msgs[0].Summary, working)
	}
	every, err := s.AllMessages(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := marked(every); !slices.Equal(got, all) {
		t.Fatalf("restored all messages\n got %q\nwant %q", got, all)
	}
}

// marked is role:content of each message with its summary and compacted marks.
func marked(msgs []*eventsv1.Message) []string {
	var out []string
	for _, m := range msgs {
		s := m.Role + ":" + m.Content
		if m.Summary {
			s += " summary"
		}
		if m.Compacted {
			s += " compacted"
		}
		out = append(out, s)
	}
	return out
}
