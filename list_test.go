package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

// manualClock reads a time that moves only when the test sets it.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// titlePrompt is a prompt whose first line makes the title.
const titlePrompt = "  Fix the build, then tell me what broke  \nThe logs are in /tmp.\n"

// promptAndWait sends the prompt (with opt, if any) to session id, which
// starts run runID, and returns once that run ended.
func promptAndWait(t *testing.T, rt *tack.Runtime, id, text, runID string, opt ...tack.PromptOptions) {
	t.Helper()
	ctx := t.Context()
	s, err := rt.Session(id)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Prompt(ctx, text, opt...); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-sub.C:
			if ev.GetAgentEnd().GetRunId() == runID {
				return
			}
		case <-deadline:
			t.Fatalf("run %s did not end", runID)
		}
	}
}

// onlyEntry lists the sessions of rt and returns the one entry.
func onlyEntry(t *testing.T, rt *tack.Runtime) *eventsv1.SessionSummary {
	t.Helper()
	list, err := rt.List(t.Context(), tack.ListOptions{})
	if err != nil || len(list.Sessions) != 1 {
		t.Fatalf("List = %v, %v; want one session", list, err)
	}
	return list.Sessions[0]
}

// TestListShowsTitleAndActivity: without a store, a session's list entry
// is untitled and dated at its creation until the first prompt; then its
// title is the prompt's first line (get_state's too) and updated_at the
// time of the run, by the runtime's clock, to the microsecond.
func TestListShowsTitleAndActivity(t *testing.T) {
	created := time.Date(2026, 11, 24, 10, 0, 0, 123456789, time.UTC)
	clock := &manualClock{now: created}
	rt, err := tack.New(tack.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := rt.Spawn(tack.SessionConfig{ID: "s1", Script: json.RawMessage(`{"turns":[{"text":"Done."}]}`)}); err != nil {
		t.Fatal(err)
	}
	got := onlyEntry(t, rt)
	if got.Title != "" || got.UpdatedAt != "2026-11-24T10:00:00.123456Z" || !got.Loaded || got.MessageCount != 0 {
		t.Fatalf("before the prompt: %v; want no title, updated at creation", got)
	}

	clock.Set(created.Add(90 * time.Second))
	promptAndWait(t, rt, "s1", titlePrompt, "r-1")
	got = onlyEntry(t, rt)
	if got.Title != "Fix the build, then tell me what broke" || got.UpdatedAt != "2026-11-24T10:01:30.123456Z" ||
		got.State != "idle" || got.MessageCount != 2 {
		t.Fatalf("after the prompt: %v", got)
	}

	// A second prompt moves updated_at, not the title.
	clock.Set(created.Add(time.Hour))
	promptAndWait(t, rt, "s1", "and now?", "r-2")
	got = onlyEntry(t, rt)
	if got.Title != "Fix the build, then tell me what broke" || got.UpdatedAt != "2026-11-24T11:00:00.123456Z" {
		t.Fatalf("after the second prompt: %v", got)
	}
	st, err := rt.State(t.Context(), "s1")
	if err != nil || st.Title != "Fix the build, then tell me what broke" {
		t.Fatalf("get_state title %q, %v", st.GetTitle(), err)
	}
}

// TestListWithStoreDatesByTheStore: with a store, a listed session's
// updated_at is when the store last wrote it, by the store's clock, and the
// title is stored with the first prompt.
func TestListWithStoreDatesByTheStore(t *testing.T) {
	storeClock := &manualClock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	mem := memory.New(store.WithClock(storeClock.Now))
	rt, err := tack.New(tack.WithStore(mem), tack.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := rt.Spawn(tack.SessionConfig{ID: "s1", Script: json.RawMessage(`{"turns":[{"text":"Done."}]}`)}); err != nil {
		t.Fatal(err)
	}
	if got := onlyEntry(t, rt); got.Title != "" || got.UpdatedAt != "2026-11-24T09:00:00.000000Z" {
		t.Fatalf("before the prompt: %v", got)
	}
	storeClock.Set(time.Date(2026, 11, 24, 9, 30, 0, 250000000, time.UTC))
	promptAndWait(t, rt, "s1", titlePrompt, "r-1")
	got := onlyEntry(t, rt)
	if got.Title != "Fix the build, then tell me what broke" || got.UpdatedAt != "2026-11-24T09:30:00.250000Z" || !got.Loaded {
		t.Fatalf("after the prompt: %v", got)
	}
	snap, err := mem.Get(context.Background(), "s1")
	if err != nil || snap.Title != "Fix the build, then tell me what broke" {
		t.Fatalf("stored title %q, %v", snap.Title, err)
	}
}

// TestListPagesWithoutAStore: a runtime without a store pages its loaded
// and parked sessions as a store pages its records — newest first, then
// by id, limit at a time from the cursor, every session once — and
// refuses a cursor no page gave. It listed them all, oldest first, on
// every page before.
func TestListPagesWithoutAStore(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []tack.Option
	}{
		{"loaded", nil},
		{"parked", []tack.Option{tack.WithPassivateAfter(time.Millisecond)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &manualClock{now: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}
			rt, err := tack.New(append([]tack.Option{tack.WithClock(clock.Now)}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			// s0 and s1 share a time: the id orders them.
			for i, id := range []string{"s0", "s1", "s2", "s3", "s4"} {
				clock.Set(time.Date(2026, 11, 24, 10, 0, max(i, 1), 0, time.UTC))
				if _, err := rt.Spawn(tack.SessionConfig{ID: id, Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`)}); err != nil {
					t.Fatal(err)
				}
			}
			if len(tc.opts) > 0 {
				eventually.Within(t, 5*time.Second, func() error {
					if ids := rt.Sessions(); len(ids) > 0 {
						return fmt.Errorf("still loaded: %v", ids)
					}
					return nil
				})
			}
			var pages [][]string
			cursor := ""
			for range 5 {
				list, err := rt.List(t.Context(), tack.ListOptions{Limit: 2, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, s := range list.Sessions {
					ids = append(ids, s.Session)
				}
				pages = append(pages, ids)
				if cursor = list.Next; cursor == "" {
					break
				}
			}
			if want := [][]string{{"s4", "s3"}, {"s2", "s1"}, {"s0"}}; !reflect.DeepEqual(pages, want) {
				t.Fatalf("pages %v, want %v", pages, want)
			}
			if _, err := rt.List(t.Context(), tack.ListOptions{Cursor: "not a cursor"}); tack.Code(err) != "bad_request" {
				t.Fatalf("a made-up cursor: %v, want bad_request", err)
			}
		})
	}
}
