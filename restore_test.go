package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

// restoreScript: the first turn calls a long sleep (in flight at the
// crash), the second answers, with usage so the totals can be checked.
const restoreScript = `{"turns":[
 {"text":"Sleeping.","tool_calls":[{"name":"sleep","args":{"ms":30000}}],"usage":{"input_tokens":100,"output_tokens":10}},
 {"text":"Second turn.","usage":{"input_tokens":120,"output_tokens":5}}]}`

// crashedSession runs a session into the first turn's sleep, with a prompt
// queued, and crashes the process; it returns the store as it was left.
func crashedSession(t *testing.T) *memory.Store {
	t.Helper()
	mem := memory.New()
	st := &crashable{Store: mem, dead: make(chan struct{})}
	first, err := tack.New(tack.WithStore(st), tack.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(st.dead); first.Close() })
	s, err := first.Spawn(tack.SessionConfig{ID: "s", Script: json.RawMessage(restoreScript)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"tool_execution_start"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	<-sub.C
	if queued, err := s.Prompt(ctx, "then this"); err != nil || !queued {
		t.Fatalf("second prompt: queued %v, %v", queued, err)
	}
	st.crash()
	return mem
}

// TestRestoredViewWhateverTheFirstCommand: the first use of a crashed
// session, whatever it is, sees it restored — idle, the call in flight
// answered, the run ended, agent_recovered in the ring — and the scripted
// model goes on at its second turn with the usage totals kept.
func TestRestoredViewWhateverTheFirstCommand(t *testing.T) {
	wantHistory := []string{"user:go", "assistant:Sleeping.", "tool:interrupted: process restarted"}
	firsts := map[string]func(context.Context, *tack.Runtime) error{
		"get_messages": func(ctx context.Context, rt *tack.Runtime) error {
			msgs, err := rt.Messages(ctx, "s")
			if err == nil && fmt.Sprint(roles(msgs)) != fmt.Sprint(wantHistory) {
				err = fmt.Errorf("history %v", roles(msgs))
			}
			return err
		},
		"get_state": func(ctx context.Context, rt *tack.Runtime) error {
			st, err := rt.State(ctx, "s")
			if err == nil && (st.State != "idle" || len(st.RunningTools) != 0 || st.RunId != nil) {
				err = fmt.Errorf("state %v", st)
			}
			return err
		},
		"list_sessions": func(ctx context.Context, rt *tack.Runtime) error {
			list, err := rt.List(ctx, tack.ListOptions{Limit: 10})
			if err == nil && (len(list.Sessions) != 1 || list.Sessions[0].State != "idle" || list.Sessions[0].MessageCount != 3) {
				err = fmt.Errorf("list %v", list)
			}
			return err
		},
		"subscribe": func(ctx context.Context, rt *tack.Runtime) error {
			s, err := rt.Session("s")
			if err != nil {
				return err
			}
			r, err := s.Send(ctx, &eventsv1.Subscribe{Since: 0, Types: []string{"agent_*"}})
			if err != nil {
				return err
			}
			var got []string
			for _, ev := range r.GetEvents().GetEvents() {
				got = append(got, events.Type(ev))
			}
			if fmt.Sprint(got) != "[events_lost agent_recovered agent_end]" {
				return fmt.Errorf("replay %v", got)
			}
			return nil
		},
	}
	for name, first := range firsts {
		t.Run(name, func(t *testing.T) {
			mem := crashedSession(t)
			rt, err := tack.New(tack.WithStore(mem), tack.WithNode("n"))
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			ctx := t.Context()
			if err := first(ctx, rt); err != nil {
				t.Fatal(err)
			}
			s, err := rt.Session("s")
			if err != nil {
				t.Fatal(err)
			}
			st, err := s.State(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(st.PromptQueue) != "[then this]" || st.Usage.InputTokens != 100 || st.Usage.OutputTokens != 10 || st.Title != "go" {
				t.Fatalf("restored state: queue %v, usage %v, title %q", st.PromptQueue, st.Usage, st.Title)
			}
			sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"message_committed"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Prompt(ctx, "more"); err != nil {
				t.Fatal(err)
			}
			var answer string
			for ev := range sub.C {
				if m := ev.GetMessageCommitted().GetMessage(); m.GetRole() == "assistant" {
					answer = m.Content
					break
				}
			}
			if answer != "Second turn." {
				t.Fatalf("after the restart the script answered %q, want its second turn", answer)
			}
		})
	}
}

// TestConcurrentFirstUsesShareOneRestore: many first commands at once
// restore the session once — one agent_recovered — and all succeed.
func TestConcurrentFirstUsesShareOneRestore(t *testing.T) {
	mem := crashedSession(t)
	rt, err := tack.New(tack.WithStore(mem), tack.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				_, err = rt.State(ctx, "s")
			} else {
				_, err = rt.Messages(ctx, "s")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s, _ := rt.Session("s")
	r, err := s.Send(ctx, &eventsv1.Subscribe{Types: []string{"agent_recovered"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.GetEvents().GetEvents()); n != 2 { // events_lost, then one agent_recovered
		t.Fatalf("%d events in the replay, want events_lost and one agent_recovered", n)
	}
}

// TestTitleSurvivesRestart: a session's title is stored with its first
// prompt: after a restart it is listed before the session is loaded, and
// get_state shows it once restored. A session stored before titles were
// (history, no title) gets its first prompt's once restored.
func TestTitleSurvivesRestart(t *testing.T) {
	mem := memory.New()
	first, err := tack.New(tack.WithStore(mem), tack.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Spawn(tack.SessionConfig{ID: "s", Script: json.RawMessage(`{"turns":[{"text":"Done."}]}`)}); err != nil {
		t.Fatal(err)
	}
	promptAndWait(t, first, "s", "Plan the release\nwith notes", "r-1")
	first.Close()

	ctx := t.Context()
	if err := mem.Create(ctx, "old", store.Config{Model: "script:demo"}); err != nil {
		t.Fatal(err)
	}
	if err := mem.Apply(ctx, "old", &store.Batch{Messages: []*llm.Message{llm.UserMessage("Older session"), llm.AssistantMessage("Hi.")}}); err != nil {
		t.Fatal(err)
	}
	rt, err := tack.New(tack.WithStore(mem), tack.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	list, err := rt.List(ctx, tack.ListOptions{})
	if err != nil || len(list.Sessions) != 2 {
		t.Fatalf("List = %v, %v", list, err)
	}
	snap, err := mem.Get(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if got := list.Sessions[1]; got.Session != "s" || got.Loaded || got.Title != "Plan the release" ||
		got.UpdatedAt != eventjson.Timestamp(snap.UpdatedAt) {
		t.Fatalf("listed after the restart: %v; want s, not loaded, titled, updated at %v", got, snap.UpdatedAt)
	}
	if got := list.Sessions[0]; got.Session != "old" || got.Title != "" {
		t.Fatalf("listed the untitled session as %v", got)
	}
	for id, want := range map[string]string{"s": "Plan the release", "old": "Older session"} {
		st, err := rt.State(ctx, id)
		if err != nil || st.Title != want {
			t.Fatalf("restored %s: title %q, %v; want %q", id, st.GetTitle(), err, want)
		}
	}
}

func roles(msgs []*llm.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role+":"+m.Content)
	}
	return out
}

// heldAcquire is a store whose first lease is held until released: a
// session's record is written, its actor not yet made.
type heldAcquire struct {
	store.Store
	begun, release chan struct{}
	once           sync.Once
}

func (s *heldAcquire) Acquire(ctx context.Context, id, owner string, ttl time.Duration) error {
	first := false
	s.once.Do(func() { first = true })
	if first {
		close(s.begun)
		<-s.release
	}
	return s.Store.Acquire(ctx, id, owner, ttl)
}

// TestLookupWaitsForACreate: a session looked up while it is made (its
// record written, its actor not yet started) is the one made, once it
// is. Before, the lookup restored the session from that record, a second
// incarnation that took the actor's name: the create failed, or lost its
// lease.
func TestLookupWaitsForACreate(t *testing.T) {
	st := &heldAcquire{Store: memory.New(), begun: make(chan struct{}), release: make(chan struct{})}
	rt, err := tack.New(tack.WithStore(st), tack.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	made := make(chan error, 1)
	go func() {
		_, err := rt.Spawn(tack.SessionConfig{ID: "s", Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`)})
		made <- err
	}()
	<-st.begun
	looked := make(chan error, 1)
	go func() {
		s, err := rt.Session("s")
		if err == nil {
			_, err = s.Prompt(t.Context(), "go")
		}
		looked <- err
	}()
	time.Sleep(50 * time.Millisecond) // the lookup waits
	close(st.release)
	if err := <-made; err != nil {
		t.Fatalf("the create: %v", err)
	}
	if err := <-looked; err != nil {
		t.Fatalf("the lookup: %v", err)
	}
	s, err := rt.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	eventually.Within(t, 5*time.Second, func() error {
		msgs, err := s.Messages(t.Context())
		if err != nil || len(msgs) != 2 {
			return fmt.Errorf("messages %v, %v; want the prompt and its answer", msgs, err)
		}
		return nil
	})
}
