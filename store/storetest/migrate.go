package storetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/store"
)

// SQL is a SQL store's database as the migration test reaches it.
type SQL struct {
	// Open opens a store on the database, the same one each time.
	Open func(t *testing.T) store.Store
	// Exec runs a statement on the store's database.
	Exec func(t *testing.T, st store.Store, query string)
	// Version is the newest schema version the store's database records.
	Version func(t *testing.T, st store.Store) int
	// Postgres says the database is PostgreSQL's, SQLite's otherwise: the
	// two spell the columns of older schemas differently.
	Postgres bool
}

// before8 are the statements that take the schema from version 8 back to
// 7, before a session's settings were one JSON object: the columns they
// replaced come back, at their defaults, and spec goes.
func before8(postgres bool) []string {
	cols := []string{
		"system TEXT NOT NULL DEFAULT ''", "tools TEXT NOT NULL DEFAULT '[]'", "plugins TEXT", "script TEXT",
		"context TEXT", "subagents TEXT", "queue_mode TEXT NOT NULL DEFAULT ''",
	}
	if postgres {
		cols = []string{
			"system text NOT NULL DEFAULT ''", "tools text[] NOT NULL DEFAULT '{}'", "plugins json", "script json",
			"context json", "subagents json", "queue_mode text NOT NULL DEFAULT ''",
		}
	}
	var stmts []string
	for _, c := range cols {
		stmts = append(stmts, `ALTER TABLE sessions ADD COLUMN `+c)
	}
	return append(stmts, `ALTER TABLE sessions DROP COLUMN spec`)
}

// downs are the statements that take the schema from one version back to
// the one before, by the version they reach, newest first after
// before8's; SQLite and PostgreSQL take the same ones.
var downs = []struct {
	version int
	stmts   []string
}{
	{6, []string{`ALTER TABLE sessions DROP COLUMN queue_mode`}}, // before queue modes
	{5, []string{`ALTER TABLE sessions DROP COLUMN subagents`}},  // before sub-agent options
	{4, []string{ // before context options and compaction
		`ALTER TABLE sessions DROP COLUMN context`,
		`ALTER TABLE sessions DROP COLUMN history_start`,
	}},
	{3, []string{`ALTER TABLE sessions DROP COLUMN title`}}, // before titles
	{2, []string{ // before users
		`DROP INDEX sessions_by_user`,
		`ALTER TABLE sessions DROP COLUMN user_name`,
	}},
}

// rewind is the statements that take the newest schema back to version.
func rewind(version int, postgres bool) []string {
	stmts := before8(postgres)
	for _, d := range downs {
		if d.version >= version {
			stmts = append(stmts, d.stmts...)
		}
	}
	return append(stmts, fmt.Sprintf(`DELETE FROM schema_migrations WHERE version > %d`, version))
}

// RunMigrate checks that a database an older release wrote (schema
// version 2, before sessions had users; 3, before titles; 4, before
// context options; 5, before sub-agent options; 6, before queue modes; 7,
// before a session's settings were one JSON object) opens at the newest
// version with its sessions intact, as nobody's and untitled, and takes
// users and titles from then on (CheckMigrated); a session version 7
// wrote with every setting comes back with them all (checkSettings).
// newDB gives each case a database of its own.
func RunMigrate(t *testing.T, newDB func(t *testing.T) SQL) {
	for version := 7; version >= 2; version-- {
		t.Run(fmt.Sprintf("from version %d", version), func(t *testing.T) {
			db := newDB(t)
			old := db.Open(t)
			newest := db.Version(t, old)
			if err := old.Create(t.Context(), "old", store.Config{Model: "script:demo"}); err != nil {
				t.Fatal(err)
			}
			if version == 7 {
				if err := old.Create(t.Context(), "full", store.Config{Model: "local/qwen3-8b", User: "alice"}); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range rewind(version, db.Postgres) {
				db.Exec(t, old, q)
			}
			if v := db.Version(t, old); v != version {
				t.Fatalf("schema version %d after the rewind, want %d", v, version)
			}
			if version == 7 {
				db.Exec(t, old, fullAt7(db.Postgres))
			}
			if err := old.Close(); err != nil {
				t.Fatal(err)
			}
			st := db.Open(t)
			if v := db.Version(t, st); v != newest {
				t.Fatalf("schema version %d after reopening, want %d", v, newest)
			}
			if version == 7 {
				checkSettings(t, st)
			}
			CheckMigrated(t, st, func() store.Store {
				if err := st.Close(); err != nil {
					t.Fatal(err)
				}
				return db.Open(t)
			})
		})
	}
}

// fullAt7 gives session "full" every setting, in the columns of schema
// version 7, as that release wrote them: the system prompt and the inline
// script as they came, the options as Go's encoding/json wrote them.
func fullAt7(postgres bool) string {
	tools := `'["shell","read_file"]'`
	if postgres {
		tools = `'{shell,read_file}'`
	}
	return `UPDATE sessions SET system = 'It''s <b>terse</b> "\u00e9".
', tools = ` + tools + `,
	plugins = '[{"name":"approval","config":{"tools":["shell"],"n":1.50}},{"name":"todo"}]',
	script = '{"turns": [{"text": "hi",  "delay_ms": 1.0}]}',
	context = '{"max_messages":40,"keep_recent":0,"compact_model":"small"}',
	subagents = '{"max_depth":2,"tools":["shell"],"inherit_plugins":false,"depth":1}',
	queue_mode = 'all'
	WHERE id = 'full'`
}

// wantFull is session "full" as fullAt7 wrote it, its inline script
// compacted (the store keeps JSON, and SQLite's migration minified it).
var wantFull = spec.Session{
	ID: "full", Model: "local/qwen3-8b", User: "alice", System: "It's <b>terse</b> \"\\u00e9\".\n",
	Tools: []string{"shell", "read_file"},
	Plugins: []plugins.Config{
		{Name: "approval", Config: json.RawMessage(`{"tools":["shell"],"n":1.50}`)},
		{Name: "todo"},
	},
	Script:    json.RawMessage(`{"turns":[{"text":"hi","delay_ms":1.0}]}`),
	Context:   &llm.ContextConfig{MaxMessages: 40, KeepRecent: new(0), CompactModel: "small"},
	Subagents: &spec.Subagents{MaxDepth: new(2), Tools: []string{"shell"}, InheritPlugins: new(false), Depth: 1},
	QueueMode: events.QueueAll,
}

// checkSettings checks that session "full", written by schema version 7
// with every setting (fullAt7), reads back through st and spec.FromStored
// as wantFull; that rewritten as the runtime writes it now, it reads back
// the same again; and deletes it.
func checkSettings(t *testing.T, st store.Store) {
	t.Helper()
	for _, when := range []string{"after the migration", "rewritten"} {
		snap, err := st.Get(t.Context(), "full")
		if err != nil {
			t.Fatal(err)
		}
		got, err := spec.FromStored("full", snap.Config)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		var script bytes.Buffer
		if err := json.Compact(&script, got.Script); err != nil {
			t.Fatalf("%s: the script: %v", when, err)
		}
		got.Script = script.Bytes()
		if !reflect.DeepEqual(got, wantFull) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(wantFull)
			t.Fatalf("%s: session full is\n%s, want\n%s (stored %s)", when, g, w, snap.Config.Spec)
		}
		cfg := got.Stored(got.Model)
		if err := st.Apply(t.Context(), "full", &store.Batch{Config: &cfg}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Delete(t.Context(), "full"); err != nil {
		t.Fatal(err)
	}
}

// CheckMigrated checks a store that was opened on data written by an
// older schema (before sessions had users, or titles), holding a session
// "old" with model script:demo: the old session has no user, no title and
// no settings; a new one made with a user is listed as that user's; a
// title set on the old session is listed, and is still there after
// reopen closes the store and opens the same database again. The SQLite
// and PostgreSQL migration tests share it.
func CheckMigrated(t *testing.T, st store.Store, reopen func() store.Store) {
	t.Helper()
	snap, err := st.Get(t.Context(), "old")
	if err != nil || snap.Config.User != "" || snap.Title != "" || snap.Config.Model != "script:demo" || snap.HistoryStart != 0 {
		t.Fatalf("old session after migration: %+v, %v", snap, err)
	}
	if got, err := spec.FromStored("old", snap.Config); err != nil || !reflect.DeepEqual(got, spec.Session{ID: "old", Model: "script:demo"}) {
		t.Fatalf("old session's settings after migration: %+v (stored %s), %v", got, snap.Config.Spec, err)
	}
	if err := st.Create(t.Context(), "new", store.Config{Model: "script:demo", User: "alice"}); err != nil {
		t.Fatal(err)
	}
	page, err := st.List(t.Context(), store.Page{User: "alice"})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != "new" {
		t.Fatalf("alice's sessions: %+v, %v", page, err)
	}
	if err := st.Apply(t.Context(), "old", &store.Batch{Title: "Fix the build", State: "running"}); err != nil {
		t.Fatal(err)
	}
	checkTitles(t, st, "after the title was set")
	checkTitles(t, reopen(), "after reopening")
}

// checkTitles fails the test unless st lists "old" (titled "Fix the build",
// most recently updated) before "new" (untitled).
func checkTitles(t *testing.T, st store.Store, when string) {
	t.Helper()
	page, err := st.List(t.Context(), store.Page{})
	if err != nil || len(page.Sessions) != 2 {
		t.Fatalf("%s: List = %+v, %v", when, page, err)
	}
	if old, other := page.Sessions[0], page.Sessions[1]; old.ID != "old" || old.Title != "Fix the build" || old.State != "running" ||
		other.ID != "new" || other.Title != "" {
		t.Fatalf("%s: listed %+v and %+v, want old titled \"Fix the build\" then new untitled", when, old, other)
	}
	snap, err := st.Get(t.Context(), "old")
	if err != nil || snap.Title != "Fix the build" {
		t.Fatalf("%s: Get(old) = %+v, %v", when, snap, err)
	}
}
