package tack_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store/sqlite"
)

// toolsScript writes a title and a todo list, then (after a restart)
// calls a detached demo tool and a kept one, then (after another) the
// demo tool attached again.
const toolsScript = `{"turns":[
 {"text":"<title>Release plan</title>\nWriting todos.","tool_calls":[{"name":"todo_write","args":{"todos":[{"text":"draft notes","status":"done"},{"text":"tag the release","status":"pending"}]}}]},
 {"text":"Listed."},
 {"tool_calls":[{"name":"sleep","args":{"ms":1}},{"name":"echo","args":{"text":"still here"}}]},
 {"text":"Went on."},
 {"tool_calls":[{"name":"sleep","args":{"ms":1}}]},
 {"text":"Slept."}]}`

// TestToolsTodosTitleSurviveRestart: on SQLite, the tool set as
// attach_tools and detach_tools left it (a scripted model's demo tool
// detached stays detached, and attached again stays attached), the todo
// list and the title the model wrote come back after a restart.
func TestToolsTodosTitleSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tack.db")
	ctx := t.Context()
	// restart runs one process's life on the database: use gets the
	// session "s" (created by the first life).
	restart := func(use func(rt *tack.Runtime, s *tack.Session)) {
		t.Helper()
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		rt, err := tack.New(tack.WithStore(st), tack.WithNode("n"))
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		s, err := rt.Session("s")
		if err != nil {
			if s, err = rt.Spawn(tack.SessionConfig{ID: "s", Tools: []string{"todo_write"}, Script: json.RawMessage(toolsScript)}); err != nil {
				t.Fatal(err)
			}
		}
		use(rt, s)
	}
	wantTodos := []*eventsv1.Todo{{Text: "draft notes", Status: "done"}, {Text: "tag the release", Status: "pending"}}

	restart(func(rt *tack.Runtime, s *tack.Session) {
		promptAndWait(t, rt, "s", "plan the release", "r-1")
		if err := s.DetachTools(ctx, "sleep", "shell"); err != nil {
			t.Fatal(err)
		}
	})
	restart(func(rt *tack.Runtime, s *tack.Session) {
		list, err := rt.List(ctx, tack.ListOptions{})
		if err != nil || len(list.Sessions) != 1 || list.Sessions[0].Title != "Release plan" {
			t.Fatalf("list after the restart: %v, %v", list, err)
		}
		st, err := s.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(st.Todos, wantTodos, func(a, b *eventsv1.Todo) bool { return proto.Equal(a, b) }) || st.Title != "Release plan" {
			t.Fatalf("restored todos %v, title %q", st.Todos, st.Title)
		}
		promptAndWait(t, rt, "s", "go on", "r-2")
		msgs, err := s.Messages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"user:plan the release", "assistant:Writing todos.",
			"tool:The todo list is now (2):\n[done] draft notes\n[pending] tag the release", "assistant:Listed.",
			"user:go on", "assistant:",
			`tool:unknown tool "sleep"; available tools: echo, sleep_immune, sleep_stubborn, todo_write`,
			"tool:still here", "assistant:Went on."}
		if got := roles(msgs); !slices.Equal(got, want) {
			t.Fatalf("history\n got %q\nwant %q", got, want)
		}
		if err := s.AttachTools(ctx, "sleep"); err != nil {
			t.Fatal(err)
		}
	})
	restart(func(rt *tack.Runtime, s *tack.Session) {
		promptAndWait(t, rt, "s", "sleep now", "r-3")
		msgs, err := s.Messages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := roles(msgs[len(msgs)-3:]); !slices.Equal(got, []string{"assistant:", "tool:slept 1 ms", "assistant:Slept."}) {
			t.Fatalf("after attaching sleep again: %q", got)
		}
	})
}
