package tack_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/store/sqlite"
)

// TestControlSurvivesRestart: with a SQLite file, a rollback's marks, the
// queue mode and a fork (its history, its owner, its place in the list)
// are all there after the process is gone and another opens the file.
func TestControlSurvivesRestart(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "tack.db")
	// open opens the file in a runtime of its own, closed by the returned
	// function (and at the end of the test).
	open := func() (*tack.Runtime, func()) {
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := tack.New(tack.WithStore(st))
		if err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		stop := func() { once.Do(func() { rt.Close(); st.Close() }) }
		t.Cleanup(stop)
		return rt, stop
	}
	rt, stop := open()
	// The first run streams slowly; the rollback prompt takes it out, and
	// its own run answers at once.
	s, err := rt.Spawn(tack.SessionConfig{ID: "s", User: "alice", QueueMode: "all",
		Script: json.RawMessage(`{"turns":[{"text":"slow","chunk_size":1,"chunk_delay_ms":20000},{"text":"fast"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"message_delta", "agent_end"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, "first try"); err != nil {
		t.Fatal(err)
	}
	<-sub.C // the first answer streams: it took the script's first turn
	if queued, err := s.Prompt(ctx, "second try", tack.PromptOptions{IfBusy: "rollback"}); err != nil || queued {
		t.Fatalf("rollback prompt: queued %v, %v", queued, err)
	}
	for _, want := range []string{"r-1:aborted", "r-2:completed"} {
		ev := <-sub.C
		for ev.GetAgentEnd() == nil {
			ev = <-sub.C
		}
		if got := ev.GetAgentEnd().GetRunId() + ":" + ev.GetAgentEnd().GetReason(); got != want {
			t.Fatalf("agent_end %s, want %s", got, want)
		}
	}
	f, err := s.Fork(ctx, 1, "s-fork")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fork(ctx, 3, ""); tack.Code(err) != "bad_request" {
		t.Fatalf("fork beyond the history: %v", err)
	}
	if msgs, err := f.Messages(ctx); err != nil || !slices.Equal(roles(msgs), []string{"user:second try"}) {
		t.Fatalf("fork's history %v, %v", roles(msgs), err)
	}
	stop()

	rt, _ = open()
	working := []string{"user:second try", "assistant:fast"}
	cut := "assistant:s\n\n[interrupted]"
	if msgs, err := rt.Messages(ctx, "s"); err != nil || !slices.Equal(roles(msgs), working) {
		t.Fatalf("history after the restart %v, %v", roles(msgs), err)
	}
	s, err = rt.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.AllMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var marks []bool
	for _, m := range all {
		marks = append(marks, m.RolledBack)
	}
	if got := roles(all); !slices.Equal(got, append([]string{"user:first try", cut}, working...)) ||
		!slices.Equal(marks, []bool{true, true, false, false}) {
		t.Fatalf("all messages after the restart %q, rolled back %v", got, marks)
	}
	list, err := rt.List(ctx, tack.ListOptions{User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sum := range list.Sessions {
		ids = append(ids, sum.Session)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"s", "s-fork"}) {
		t.Fatalf("alice's sessions %v", ids)
	}
	if u, err := rt.User(ctx, "s-fork"); err != nil || u != "alice" {
		t.Fatalf("the fork's user %q, %v", u, err)
	}
	if msgs, err := rt.Messages(ctx, "s-fork"); err != nil || !slices.Equal(roles(msgs), []string{"user:second try"}) {
		t.Fatalf("fork's history after the restart %v, %v", roles(msgs), err)
	}
}
