package tack_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/store/memory"
)

var doneScript = json.RawMessage(`{"turns":[{"text":"Done."}]}`)

// TestRefusedCreateLeavesTheOwner: however many creates and forks of an
// existing id race with reads of its owner, every read names the owner,
// and every refused create or fork is bad_request — with and without a
// store.
func TestRefusedCreateLeavesTheOwner(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts func() []tack.Option
	}{
		{"no store", func() []tack.Option { return nil }},
		{"store", func() []tack.Option { return []tack.Option{tack.WithStore(memory.New()), tack.WithNode("n")} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := tack.New(tc.opts()...)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			ctx := context.Background()
			if _, err := rt.Spawn(tack.SessionConfig{ID: "v", Script: doneScript, User: "alice"}); err != nil {
				t.Fatal(err)
			}
			src, err := rt.Spawn(tack.SessionConfig{ID: "b", Script: doneScript, User: "bob"})
			if err != nil {
				t.Fatal(err)
			}
			const workers, rounds = 8, 200
			var wg sync.WaitGroup
			errs := make(chan string, 2*workers*rounds)
			for range workers {
				wg.Go(func() {
					for i := range rounds {
						var err error
						if i%2 == 0 {
							_, err = rt.Spawn(tack.SessionConfig{ID: "v", Script: doneScript, User: "bob"})
						} else {
							_, err = src.Fork(ctx, 0, "v")
						}
						if tack.Code(err) != "bad_request" || !strings.Contains(err.Error(), `"v" exists`) {
							errs <- "create or fork of v: " + errString(err)
						}
					}
				})
				wg.Go(func() {
					for range rounds {
						if u, err := rt.User(ctx, "v"); u != "alice" || err != nil {
							errs <- "owner of v: " + u + " " + errString(err)
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Fatal(e)
			}
			if u, err := rt.User(ctx, "v"); u != "alice" || err != nil {
				t.Fatalf("owner of v after the race: %q, %v", u, err)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestClientIDs: a chosen id (create or fork) follows the id rule; each
// breach is bad_request quoting the rule, with the id quoted escaped and
// cut short.
func TestClientIDs(t *testing.T) {
	rt, err := tack.New()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	src, err := rt.Spawn(tack.SessionConfig{ID: "src", Script: doneScript})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, id string
		ok       bool
		quoted   string
	}{
		{"every allowed character", "Az09._:@-x", true, ""},
		{"three dots", "...", true, ""},
		{"128 characters", strings.Repeat("a", 128), true, ""},
		{"129 characters", strings.Repeat("a", 129), false, `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"... (129 bytes) is`},
		{"100 kB", strings.Repeat("a", 100_000), false, `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"... (100000 bytes) is`},
		{"dot", ".", false, `"." is`},
		{"dot dot", "..", false, `".." is`},
		{"slash (a sub-agent's)", "src/sub-1", false, `"src/sub-1" is`},
		{"traversal", "../etc", false, `"../etc" is`},
		{"newline", "a\nb", false, `"a\nb" is`},
		{"bidi mark", "a\u202eb", false, `"a\u202eb" is`},
		{"space", "a b", false, `"a b" is`},
		{"non-ASCII letter", "é", false, `"\u00e9" is`},
		{"NUL", "a\x00", false, `"a\x00" is`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, cerr := rt.Spawn(tack.SessionConfig{ID: tc.id, Script: doneScript})
			if cerr == nil {
				s.Close() // frees the id for the fork
			}
			_, ferr := src.Fork(context.Background(), 0, tc.id)
			for field, err := range map[string]error{"session": cerr, "new_session": ferr} {
				if tc.ok {
					if err != nil {
						t.Fatalf("%s %.60q: %.300v", field, tc.id, err)
					}
					continue
				}
				if tack.Code(err) != "bad_request" || !strings.Contains(err.Error(), field+" "+tc.quoted) ||
					!strings.Contains(err.Error(), tack.IDRule) {
					t.Fatalf("%s %.60q: %.300v", field, tc.id, err)
				}
			}
		})
	}
}

// TestCommandForUserReachesOnlyTheirSession: a server checks a request's
// owner, then sends its command by id; if the id changed hands in
// between (its owner deleted it, another user took it at once), the
// command, sent for the user the server checked (ForUser), is refused by
// the session it now reaches — invalid_session, as for no session — and
// a delete for that user deletes nothing. Before, bob's prompt landed in
// alice's session, and his delete removed it. With passivation on, as
// `tack serve` runs, commands go by id.
func TestCommandForUserReachesOnlyTheirSession(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []tack.Option
	}{
		{"no store", nil},
		{"passivating store", []tack.Option{tack.WithStore(memory.New()), tack.WithNode("n"), tack.WithPassivateAfter(time.Hour)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := tack.New(tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			ctx := context.Background()
			if _, err := rt.Spawn(tack.SessionConfig{ID: "x", Script: doneScript, User: "bob"}); err != nil {
				t.Fatal(err)
			}
			// bob's request: the owner is checked now ...
			if owner, err := rt.User(ctx, "x"); err != nil || owner != "bob" {
				t.Fatalf("owner %q, %v", owner, err)
			}
			// ... bob deletes x meanwhile, and alice takes the id ...
			if err := rt.Delete(ctx, "x"); err != nil {
				t.Fatal(err)
			}
			if _, err := rt.Spawn(tack.SessionConfig{ID: "x", Script: doneScript, User: "alice"}); err != nil {
				t.Fatal(err)
			}
			// ... and then the command goes, by id.
			s, err := rt.Session("x")
			if err != nil {
				t.Fatal(err)
			}
			bob := tack.ForUser(ctx, "bob")
			if _, err := s.Prompt(bob, "from bob"); tack.Code(err) != "invalid_session" {
				t.Fatalf("bob's prompt to alice's x: %v, want invalid_session", err)
			}
			if _, err := s.Messages(bob); tack.Code(err) != "invalid_session" {
				t.Fatalf("bob's read of alice's x: %v, want invalid_session", err)
			}
			if _, err := s.Export(bob); tack.Code(err) != "invalid_session" {
				t.Fatalf("bob's export of alice's x: %v, want invalid_session", err)
			}
			if _, err := s.Fork(bob, 0, "bobs"); tack.Code(err) != "invalid_session" {
				t.Fatalf("bob's fork of alice's x: %v, want invalid_session", err)
			}
			if err := rt.Delete(bob, "x"); tack.Code(err) != "invalid_session" {
				t.Fatalf("bob's delete of alice's x: %v, want invalid_session", err)
			}
			if err := s.CloseContext(bob); tack.Code(err) != "invalid_session" { // without a store, a close would end alice's x
				t.Fatalf("bob's close of alice's x: %v, want invalid_session", err)
			}
			if !rt.Loaded("x") {
				t.Fatal("bob's close closed alice's x")
			}
			msgs, err := s.Messages(tack.ForUser(ctx, "alice"))
			if err != nil || len(msgs) != 0 {
				t.Fatalf("alice's x: %v, %v; want it there, untouched", msgs, err)
			}
		})
	}
}
