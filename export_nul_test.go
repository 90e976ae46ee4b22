package tack_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/actors"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/sqlite"
)

// openSQLiteAt opens a SQLite store at path, closed when the test ends.
func openSQLiteAt(t *testing.T, path string) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// onSQLite is a runtime on a new SQLite store, the store, and stop,
// which closes the runtime (once; a restart opens another on st).
func onSQLite(t *testing.T) (store.Store, *tack.Runtime, func()) {
	t.Helper()
	st := openSQLiteAt(t, filepath.Join(t.TempDir(), "tack.db"))
	rt, err := tack.New(tack.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	return st, rt, sync.OnceFunc(func() { rt.Close() })
}

// titleOf is the title session id of rt has.
func titleOf(t *testing.T, rt *tack.Runtime, id string) string {
	t.Helper()
	s, err := rt.Session(id)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st.Title
}

// TestQueuedPromptWithNULTitlesTheSession: a prompt with a NUL byte,
// queued behind a blank one, gives the session its title when it is
// committed. The title leaves the NUL out: a store refuses a title with
// one, and the session could then store nothing more.
func TestQueuedPromptWithNULTitlesTheSession(t *testing.T) {
	st, rt, stop := onSQLite(t)
	defer stop()
	ctx := t.Context()
	s, err := rt.Spawn(tack.SessionConfig{ID: "q", QueueMode: "all",
		Script: json.RawMessage(`{"turns":[{"delay_ms":300,"text":"one"},{"text":"two"}],"when_exhausted":"repeat_last"}`)})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := s.Prompt(ctx, "   "); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, "a\x00b"); err != nil { // queued
		t.Fatal(err)
	}
	select {
	case <-sub.C:
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not end")
	}
	if got := titleOf(t, rt, "q"); got != "ab" {
		t.Fatalf("title %q, want %q", got, "ab")
	}
	promptAndWait(t, rt, "q", "plain", "r-2")
	stop()
	back, err := tack.New(tack.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if got := titleOf(t, back, "q"); got != "ab" {
		t.Fatalf("restored title %q, want %q", got, "ab")
	}
	if msgs, err := back.Messages(ctx, "q"); err != nil || len(msgs) != 6 {
		t.Fatalf("restored history %v, %v", roles(msgs), err)
	}
}

// TestImportNULFirstMessage: an imported document whose first user
// message holds a NUL byte, without a title: the session's title, taken
// from that message, leaves it out, so the session is stored, prompted,
// restored and forked as any other.
func TestImportNULFirstMessage(t *testing.T) {
	st, rt, stop := onSQLite(t)
	defer stop()
	ctx := t.Context()
	h := tack.History{Messages: []*eventsv1.Message{{Role: "user", Content: "a\x00b"}, {Role: "assistant", Content: "x"}}}
	script := json.RawMessage(`{"turns":[{"text":"hi"}],"when_exhausted":"repeat_last"}`)
	if _, err := rt.Import(ctx, tack.SessionConfig{ID: "im", Script: script}, h); err != nil {
		t.Fatal(err)
	}
	if got := titleOf(t, rt, "im"); got != "ab" {
		t.Fatalf("title %q, want %q", got, "ab")
	}
	promptAndWait(t, rt, "im", "plain", "r-1")
	promptAndWait(t, rt, "im", "plain again", "r-2")
	stop()

	back, err := tack.New(tack.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	msgs, err := back.Messages(ctx, "im")
	if err != nil || len(msgs) != 6 || msgs[0].Content != "a\x00b" {
		t.Fatalf("restored history %q, %v", roles(msgs), err)
	}
	if got := titleOf(t, back, "im"); got != "ab" {
		t.Fatalf("restored title %q, want %q", got, "ab")
	}
	s, _ := back.Session("im")
	if _, err := s.Fork(ctx, 2, "imf"); err != nil {
		t.Fatal(err)
	}
	if got := titleOf(t, back, "imf"); got != "ab" {
		t.Fatalf("the fork's title %q, want %q", got, "ab")
	}
	promptAndWait(t, back, "imf", "plain", "r-1")
	promptAndWait(t, back, "im", "plain", "r-3")
}

// TestImportTitleIsCut: an imported title is cut as a prompt's is — its
// first line, at most 80 runes and "…", without NUL, other control
// characters or bidirectional overrides — and a title that is one
// already is kept as it is.
func TestImportTitleIsCut(t *testing.T) {
	st := openSQLiteAt(t, filepath.Join(t.TempDir(), "tack.db"))
	rt, err := tack.New(tack.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	script := json.RawMessage(`{"turns":[{"text":"hi"}],"when_exhausted":"repeat_last"}`)
	for i, c := range []struct{ title, want string }{
		{"Plan the release", "Plan the release"},
		{strings.Repeat("é", 80) + "…", strings.Repeat("é", 80) + "…"},
		{"a\x00b", "ab"},
		{"line1\nline2\x1b]52;c;AAAA\x07\u202e", "line1"},
		{"  \x1b[31mred\u202e\x9b ", "[31mred"},
		{strings.Repeat("T", 1<<20), strings.Repeat("T", 80) + "…"},
		{"\xff\xfe", ""},
	} {
		id := "t" + string(rune('a'+i))
		if _, err := rt.Import(t.Context(), tack.SessionConfig{ID: id, Script: script}, tack.History{Title: c.title}); err != nil {
			t.Fatalf("import of title %.40q: %v", c.title, err)
		}
		if got := titleOf(t, rt, id); got != c.want {
			t.Errorf("imported title %.40q is %q, want %q", c.title, got, c.want)
		}
	}
	promptAndWait(t, rt, "tc", "plain", "r-1")
}

// TestStoredTitleIsCutOnRestore: a title stored whole (by an import
// before imported titles were cut) is cut when the session is restored,
// and stored so.
func TestStoredTitleIsCutOnRestore(t *testing.T) {
	st := openSQLiteAt(t, filepath.Join(t.TempDir(), "tack.db"))
	ctx := t.Context()
	snap := &store.Snapshot{Session: store.Session{State: "idle", Title: "line1\nline2\x1b[2J" + strings.Repeat("x", 1000)},
		Volatile: store.Volatile{Unstarted: true}}
	cfg := spec.Session{Model: "script:demo"}
	if err := actors.Record(ctx, st, "old", cfg, snap); err != nil {
		t.Fatal(err)
	}
	rt, err := tack.New(tack.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if got := titleOf(t, rt, "old"); got != "line1" {
		t.Fatalf("restored title %q, want %q", got, "line1")
	}
	promptAndWait(t, rt, "old", "hello", "r-1")
	loaded, err := st.Load(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Title != "line1" {
		t.Fatalf("stored title %q, want %q", loaded.Title, "line1")
	}
}

// TestImportInvalidToolNames: an imported tool call whose name no
// provider accepts is kept under invalid_tool_name, as a live model's
// is, so the imported session's requests stay valid; valid names, call
// ids and results are kept as they are.
func TestImportInvalidToolNames(t *testing.T) {
	rt, err := tack.New()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := t.Context()
	call := func(id, name string) *eventsv1.ToolCall {
		return &eventsv1.ToolCall{Id: id, Name: name, Args: &eventsv1.RawJSON{Json: []byte(`{}`)}}
	}
	h := tack.History{Messages: []*eventsv1.Message{{Role: "user", Content: "a"},
		{Role: "assistant", ToolCalls: []*eventsv1.ToolCall{call("c1", ""), call("c2", "a b/c:d.e"), call("c3", "echo"), call("c4", "fs/read_file"), call("c5", "functions.echo")}},
		{Role: "tool", ToolCallId: "c1", Content: "r1"}, {Role: "tool", ToolCallId: "c2", Content: "r2"},
		{Role: "tool", ToolCallId: "c3", Content: "r3"}, {Role: "tool", ToolCallId: "c4", Content: "r4"},
		{Role: "tool", ToolCallId: "c5", Content: "r5"}}}
	s, err := rt.Import(ctx, tack.SessionConfig{ID: "tn", Script: json.RawMessage(`{"turns":[{"text":"ok"}]}`)}, h)
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.AllMessages(ctx)
	if err != nil || len(all) != 7 {
		t.Fatalf("imported history %v, %v", all, err)
	}
	var got []string
	for _, c := range all[1].ToolCalls {
		got = append(got, c.Id+":"+c.Name)
	}
	want := "c1:invalid_tool_name c2:invalid_tool_name c3:echo c4:fs/read_file c5:invalid_tool_name"
	if strings.Join(got, " ") != want {
		t.Fatalf("imported calls %v, want %s", got, want)
	}
	if h.Messages[1].ToolCalls[0].Name != "" {
		t.Fatal("the import changed the caller's history")
	}
	promptAndWait(t, rt, "tn", "next", "r-1")
}
