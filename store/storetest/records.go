package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
)

func testCreateGet(t *testing.T, e *env) {
	// The settings are kept verbatim: spacing, key order, number
	// spellings and escapes as they came.
	cfg := store.Config{
		Model: "local/qwen3-8b",
		User:  "alice",
		Spec: json.RawMessage(`{"system": "You are terse.\n\u00e9 \u0000",  "tools": ["shell", "read_file"],
			"plugins": [{"name": "approval",  "config": {"tools": ["shell"], "n": 1.50}}],
			"script": {"turns": [{"text": "hi",  "delay_ms": 1.0}]}, "context": {"max_messages": 40,  "keep_recent": 0},
			"subagents": {"max_depth": 2,  "depth": 1}, "queue_mode": "all", "newer": null}`),
	}
	if err := e.st.Create(e.ctx, "s1", cfg); err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now().Truncate(time.Microsecond)
	want := &store.Snapshot{Session: store.Session{
		ID: "s1", Config: cfg, State: "idle", Usage: &eventsv1.Usage{}, CreatedAt: now, UpdatedAt: now,
	}}
	got, err := e.st.Get(e.ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Messages != nil {
		t.Fatalf("Get returned %d messages, want none", len(got.Messages))
	}
	wantSame(t, "Get", got, want)
	wantSame(t, "Load", e.load(t, "s1"), want)
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt in %v, want UTC", got.CreatedAt.Location())
	}

	err = e.st.Create(e.ctx, "s1", store.Config{Model: "other"})
	wantErr(t, "second Create", err, store.ErrExists)
	wantSame(t, "after second Create", e.load(t, "s1"), want)
}

func testCreateInvalid(t *testing.T, e *env) {
	for _, tc := range []struct {
		name string
		id   string
		cfg  store.Config
	}{
		{"empty id", "", store.Config{}},
		{"settings not JSON", "s1", store.Config{Spec: json.RawMessage(`{"script":`)}},
		{"settings an array", "s1", store.Config{Spec: json.RawMessage(`[{"system":"x"}]`)}},
		{"settings null", "s1", store.Config{Spec: json.RawMessage(`null`)}},
		{"settings a string", "s1", store.Config{Spec: json.RawMessage(`"{}"`)}},
		{"two objects", "s1", store.Config{Spec: json.RawMessage(`{} {}`)}},
		{"settings not UTF-8", "s1", store.Config{Spec: json.RawMessage("{\"system\":\"\xff\"}")}},
		{"NUL byte in the settings", "s1", store.Config{Spec: json.RawMessage("{\"system\":\"a\x00b\"}")}},
		{"NUL in model", "s1", store.Config{Model: "a\x00b"}},
		{"model not UTF-8", "s1", store.Config{Model: "\xff"}},
		{"NUL in user", "s1", store.Config{User: "al\x00ice"}},
		{"id not UTF-8", "s\xff", store.Config{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, "Create", e.st.Create(e.ctx, tc.id, tc.cfg), store.ErrInvalid)
		})
	}
	_, err := e.st.Get(e.ctx, "s1")
	wantErr(t, "Get after invalid Create", err, store.ErrNotFound)
}

func testNotFound(t *testing.T, e *env) {
	e.create(t, "other")
	for _, tc := range []struct {
		name string
		call func(ctx context.Context, st store.Store) error
	}{
		{"Get", func(ctx context.Context, st store.Store) error { _, err := st.Get(ctx, "nope"); return err }},
		{"Load", func(ctx context.Context, st store.Store) error { _, err := st.Load(ctx, "nope"); return err }},
		{"Messages", func(ctx context.Context, st store.Store) error { _, err := st.Messages(ctx, "nope", 0, 0); return err }},
		{"Apply", func(ctx context.Context, st store.Store) error {
			return st.Apply(ctx, "nope", &store.Batch{Messages: msgs(0, 2), State: "running"})
		}},
		{"Delete", func(ctx context.Context, st store.Store) error { return st.Delete(ctx, "nope") }},
		{"Acquire", func(ctx context.Context, st store.Store) error { return st.Acquire(ctx, "nope", "a", time.Minute) }},
		{"Renew", func(ctx context.Context, st store.Store) error { return st.Renew(ctx, "nope", "a", time.Minute) }},
		{"Release", func(ctx context.Context, st store.Store) error { return st.Release(ctx, "nope", "a") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, tc.name, tc.call(e.ctx, e.st), store.ErrNotFound)
		})
	}
	_, err := e.st.Get(e.ctx, "nope")
	wantErr(t, "Get after the calls", err, store.ErrNotFound)
}

func testBatchFields(t *testing.T, e *env) {
	e.create(t, "s1")
	want := e.load(t, "s1")
	steps := []struct {
		name  string
		batch store.Batch
		edit  func(s *store.Session)
	}{
		{"state", store.Batch{State: "running"}, func(s *store.Session) { s.State = "running" }},
		{"usage", store.Batch{Usage: &eventsv1.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15, CostUsd: 0.25, CachedInputTokens: 3, ReasoningTokens: 2}},
			func(s *store.Session) {
				s.Usage = &eventsv1.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15, CostUsd: 0.25, CachedInputTokens: 3, ReasoningTokens: 2}
			}},
		{"event seq", store.Batch{EventSeq: 42}, func(s *store.Session) { s.EventSeq = 42 }},
		{"title", store.Batch{Title: "Fix the “build” — now"}, func(s *store.Session) { s.Title = "Fix the “build” — now" }},
		{"later batches keep the title", store.Batch{State: "streaming", EventSeq: 43},
			func(s *store.Session) { s.State, s.EventSeq = "streaming", 43 }},
		{"title replaced", store.Batch{Title: "Summarise"}, func(s *store.Session) { s.Title = "Summarise" }},
		{"config", store.Batch{Config: &store.Config{Model: "m2", Spec: json.RawMessage(`{"system": "sys", "tools": ["a"], "subagents": {"depth": 1}}`)}},
			func(s *store.Session) {
				s.Config = store.Config{Model: "m2", Spec: json.RawMessage(`{"system": "sys", "tools": ["a"], "subagents": {"depth": 1}}`)}
			}},
		{"config cleared", store.Batch{Config: &store.Config{Model: "m3"}}, func(s *store.Session) { s.Config = store.Config{Model: "m3"} }},
		{"empty batch only touches", store.Batch{}, func(*store.Session) {}},
		{"zero fields keep values", store.Batch{State: "idle"}, func(s *store.Session) { s.State = "idle" }},
	}
	for _, step := range steps {
		e.clock.Advance(time.Second)
		e.apply(t, "s1", &step.batch)
		step.edit(&want.Session)
		want.UpdatedAt = e.clock.Now().Truncate(time.Microsecond)
		wantSame(t, step.name, e.load(t, "s1"), want)
	}
}

func testList(t *testing.T, e *env) {
	const n = 25
	for i := range n {
		e.create(t, fmt.Sprintf("s%02d", i))
		if i%5 != 4 { // groups of sessions share a timestamp: ties order by id
			continue
		}
		e.clock.Advance(time.Millisecond)
	}
	e.apply(t, "s03", &store.Batch{Messages: msgs(0, 3), State: "streaming", Title: "prompt 0"})
	// Expected: the last group first; within a group, ids descending; s03
	// was created in the first group and not moved (same clock as group 5).
	var want []string
	for g := 4; g >= 0; g-- {
		for i := 4; i >= 0; i-- {
			want = append(want, fmt.Sprintf("s%02d", g*5+i))
		}
	}
	want = moveToFront(want, "s03") // updated at the latest time, after s24
	for _, limit := range []int{1, 7, 10, 25, 100, 0} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			var got []string
			cursor, pages := "", 0
			for {
				page, err := e.st.List(e.ctx, store.Page{Limit: limit, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if limit > 0 && len(page.Sessions) > limit {
					t.Fatalf("page of %d, limit %d", len(page.Sessions), limit)
				}
				for _, s := range page.Sessions {
					got = append(got, s.ID)
					if s.ID == "s03" && (s.MessageCount != 3 || s.State != "streaming" || s.Config.Model != "script:demo" || s.Title != "prompt 0") {
						t.Fatalf("listed s03 = %+v", s)
					}
					if s.ID != "s03" && s.Title != "" {
						t.Fatalf("listed %s with title %q, want none", s.ID, s.Title)
					}
				}
				if page.Next == "" {
					break
				}
				cursor = page.Next
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("listed %v\nwant   %v", got, want)
			}
			if wantPages := pagesFor(n, limit); pages != wantPages {
				t.Fatalf("%d pages, want %d", pages, wantPages)
			}
		})
	}
}

// moveToFront returns ids with id moved to the front.
func moveToFront(ids []string, id string) []string {
	out := []string{id}
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

func pagesFor(n, limit int) int {
	if limit <= 0 {
		limit = store.DefaultPageSize
	}
	return (n + limit - 1) / limit
}

func testListOrderFollowsUpdates(t *testing.T, e *env) {
	for _, id := range []string{"a", "b", "c"} {
		e.create(t, id)
		e.clock.Advance(time.Second)
	}
	e.apply(t, "a", &store.Batch{State: "running"})
	page, err := e.st.List(e.ctx, store.Page{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range page.Sessions {
		got = append(got, s.ID)
	}
	if fmt.Sprint(got) != "[a c b]" || page.Next != "" {
		t.Fatalf("List = %v next %q, want [a c b] and no next page", got, page.Next)
	}
	empty, err := e.st.List(e.ctx, store.Page{Limit: 3})
	if err != nil || len(empty.Sessions) != 3 || empty.Next != "" {
		t.Fatalf("List(limit 3) = %v, %v; want 3 sessions and no next page", empty, err)
	}
}

func testListBadCursor(t *testing.T, e *env) {
	e.create(t, "s1")
	for _, c := range []string{"%%%", "bm90LWEtY3Vyc29y", "MTIz"} {
		_, err := e.st.List(e.ctx, store.Page{Cursor: c})
		wantErr(t, "List(cursor "+c+")", err, store.ErrInvalid)
	}
}

func testDelete(t *testing.T, e *env) {
	e.create(t, "s1")
	e.create(t, "s2")
	e.apply(t, "s1", &store.Batch{Messages: msgs(0, 4), Volatile: &store.Volatile{PromptQueue: []string{"q"}}})
	if err := e.st.Acquire(e.ctx, "s1", "node-a", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := e.st.Delete(e.ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	_, err := e.st.Load(e.ctx, "s1")
	wantErr(t, "Load after Delete", err, store.ErrNotFound)
	wantErr(t, "second Delete", e.st.Delete(e.ctx, "s1"), store.ErrNotFound)

	// The id is free again, with nothing of the old session left.
	e.create(t, "s1")
	snap := e.load(t, "s1")
	if len(snap.Messages) != 0 || snap.MessageCount != 0 || len(snap.Volatile.PromptQueue) != 0 || snap.Owner != "" {
		t.Fatalf("re-created s1 = %+v", snap)
	}
	if err := e.st.Acquire(e.ctx, "s1", "node-b", time.Minute); err != nil {
		t.Fatalf("Acquire of the re-created session: %v", err)
	}
	if len(e.load(t, "s2").Messages) != 0 {
		t.Fatal("s2 changed")
	}
}

// testListByUser: a Page with User lists that user's sessions only, paged
// like every list, and a Batch.Config leaves the user as it was.
func testListByUser(t *testing.T, e *env) {
	users := []string{"alice", "bob", ""}
	for i := range 9 {
		id := fmt.Sprintf("s%d", i)
		if err := e.st.Create(e.ctx, id, store.Config{Model: "script:demo", User: users[i%3]}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Millisecond)
	}
	e.apply(t, "s0", &store.Batch{Config: &store.Config{Model: "other", User: "mallory"}})
	for _, tc := range []struct{ user, want string }{
		{"alice", "[s0 s6 s3]"}, // s0 moved to the front by its update
		{"bob", "[s7 s4 s1]"},
		{"mallory", "[]"},
		{"", "[s0 s8 s7 s6 s5 s4 s3 s2 s1]"},
	} {
		var got []string
		cursor := ""
		for {
			page, err := e.st.List(e.ctx, store.Page{Limit: 2, Cursor: cursor, User: tc.user})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range page.Sessions {
				if tc.user != "" && s.Config.User != tc.user {
					t.Fatalf("List(%q) gave %s of %q", tc.user, s.ID, s.Config.User)
				}
				got = append(got, s.ID)
			}
			if page.Next == "" {
				break
			}
			cursor = page.Next
		}
		if fmt.Sprint(got) != tc.want && !(tc.want == "[]" && got == nil) {
			t.Errorf("List(User %q) = %v, want %s", tc.user, got, tc.want)
		}
	}
	snap, err := e.st.Get(e.ctx, "s0")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Config.User != "alice" || snap.Config.Model != "other" {
		t.Fatalf("after Batch.Config: user %q model %q, want alice and other", snap.Config.User, snap.Config.Model)
	}
}

// testDeleteSubagents: Delete takes the session's sub-agents (at any
// depth) with it, and nothing of a session whose id merely starts alike.
func testDeleteSubagents(t *testing.T, e *env) {
	for _, id := range []string{"s1", "s1/sub-1", "s1/sub-1/sub-1", "s1/sub-2", "s10", "s10/sub-1", "s1_x"} {
		e.create(t, id)
		e.apply(t, id, &store.Batch{Messages: msgs(0, 2)})
	}
	wantErr(t, "Delete of a session not stored", e.st.Delete(e.ctx, "s2"), store.ErrNotFound)
	if err := e.st.Delete(e.ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"s1", "s1/sub-1", "s1/sub-1/sub-1", "s1/sub-2"} {
		_, err := e.st.Get(e.ctx, id)
		wantErr(t, "Get("+id+") after Delete(s1)", err, store.ErrNotFound)
	}
	for _, id := range []string{"s10", "s10/sub-1", "s1_x"} {
		if len(e.load(t, id).Messages) != 2 {
			t.Fatalf("%s lost its history", id)
		}
	}
}

// testStale: Stale lists the sessions updated before a time, least
// recently updated first, sub-agents aside, up to the limit.
func testStale(t *testing.T, e *env) {
	e.create(t, "old")
	e.create(t, "old/sub-1")
	e.clock.Advance(time.Second)
	e.create(t, "older-but-touched")
	e.clock.Advance(time.Second)
	e.create(t, "mid")
	e.clock.Advance(time.Minute)
	e.apply(t, "older-but-touched", &store.Batch{Title: "t"})
	e.create(t, "new")
	cut := e.clock.Now()
	tests := []struct {
		name   string
		before time.Time
		limit  int
		want   []string
	}{
		{"all old", cut, 0, []string{"old", "mid"}},
		{"limit", cut, 1, []string{"old"}},
		{"none", cut.Add(-time.Hour), 0, nil},
		{"everything", cut.Add(time.Second), 10, []string{"old", "mid", "new", "older-but-touched"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.st.Stale(e.ctx, tc.before, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Stale = %q, want %q", got, tc.want)
			}
		})
	}
}
