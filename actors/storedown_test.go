package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/tools"
)

// outageStore fails every Apply while it is down, as a stopped database
// server does, and counts the tries.
type outageStore struct {
	store.Store
	down  atomic.Bool
	tries atomic.Int32
}

var errOutage = errors.New("connection refused")

func (o *outageStore) Apply(ctx context.Context, id string, b *store.Batch) error {
	o.tries.Add(1)
	if o.down.Load() {
		return errOutage
	}
	return o.Store.Apply(ctx, id, b)
}

// TestStoreOutage: the store goes down while a tool runs. The prompt
// queued meanwhile is refused, the run ends with error, the session falls
// back to what is stored; while down, reads answer, writes are refused
// without changing anything, and an abort is told at once; once the store
// is back the next prompt runs, and the store holds exactly what was
// accepted.
func TestStoreOutage(t *testing.T) {
	mem := memory.New()
	st := &outageStore{Store: mem}
	h := storedHarness(t, st, Spec{Model: scriptModel(t, "", `{"turns":[
		{"text":"one done"},
		{"tool_calls":[{"name":"sleep","args":{"ms":20000}}]},
		{"text":"three done"}]}`), Tools: demoSet(t)})
	h.ok(&eventsv1.Prompt{Text: "one"})
	h.waitFor("agent_end", 1)
	h.ok(&eventsv1.Prompt{Text: "two"})
	run := h.waitFor("tool_execution_start", 1)
	waitStored(t, mem, func(s *store.Snapshot) bool { return len(s.Messages) == 4 })

	st.down.Store(true)
	h.fails(&eventsv1.Prompt{Text: "queued while the store fails"}, "store_failed")
	if e := h.waitFor("error", 1).GetError(); e.Code != "store_failed" {
		t.Fatalf("error %v", e)
	}
	end := h.waitFor("agent_end", 2).GetAgentEnd()
	if end.Reason != "error" {
		t.Fatalf("agent_end %v", end)
	}
	for _, ev := range h.since(int(run.Seq)) {
		if ev.GetPromptQueued() != nil {
			t.Fatalf("prompt_queued told for a prompt that was not stored: %v", ev)
		}
	}
	checkLog(t, h.rec.Events())
	want := []string{"user:one", "assistant:one done", "user:two", "assistant:", "tool:" + interruptedByStore}
	if got := contents(h.history()); !slices.Equal(got, want) {
		t.Fatalf("history after the failure %q, want %q", got, want)
	}

	// Down: reads answer from memory; a write is refused after one try and
	// changes nothing; an abort is told within the bound.
	if s := h.state(); s.State != "idle" || len(s.PromptQueue) != 0 || s.MessageCount != 5 {
		t.Fatalf("state while down %v", s)
	}
	mark := h.rec.Len()
	tries := st.tries.Load()
	h.fails(&eventsv1.Prompt{Text: "refused"}, "store_failed")
	h.fails(&eventsv1.Steer{Text: "refused too"}, "store_failed")
	if n := st.tries.Load() - tries; n < 1 || n > 2 {
		t.Fatalf("%d tries at the store for two refused commands, want one each at most", n)
	}
	start := time.Now()
	h.ok(&eventsv1.Abort{})
	h.waitFor("agent_abort", 1)
	if d := time.Since(start); d > abortBound {
		t.Errorf("agent_abort took %v while the store is down", d)
	}
	if s := h.state(); s.MessageCount != 5 || len(s.PromptQueue)+len(s.SteeringQueue) != 0 {
		t.Fatalf("a refused command changed the session: %v", s)
	}
	if evs := h.since(mark); len(evs) != 1 || evs[0].GetAgentAbort() == nil {
		t.Fatalf("while down the session told %v, want agent_abort alone", evs)
	}
	if n := len(eventsOf(h, "error")); n != 1 {
		t.Fatalf("%d error events, want the one when the store went down", n)
	}

	// Back: the next prompt is accepted and runs.
	st.down.Store(false)
	h.ok(&eventsv1.Prompt{Text: "three"})
	if end := h.waitFor("agent_end", 3).GetAgentEnd(); end.Reason != "completed" {
		t.Fatalf("agent_end %v", end)
	}
	want = append(want, "user:three", "assistant:three done")
	if got := contents(h.history()); !slices.Equal(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}
	waitStored(t, mem, func(s *store.Snapshot) bool { return len(s.Messages) == len(want) })
	snap, err := mem.Load(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(snap.Messages); !slices.Equal(got, want) || snap.State != "idle" || len(snap.Volatile.PromptQueue) != 0 {
		t.Fatalf("stored %q (state %s, queue %q), want %q", got, snap.State, snap.Volatile.PromptQueue, want)
	}
}

// TestStoreOutageEndsARunThatEndedUnsaid: the store goes down while a
// tool runs, and the run ends in memory while the session still tries its
// writes again. The writes fail for good and the run's end is dropped
// with them, but its start was told: subscribers are told that it ended
// with an error and that the session is idle, exactly once. With a
// prompt queued meanwhile, whose write is the first to fail, the prompt
// is answered store_failed and the run is told to end the same way, and
// a get_state that waited for the write is answered from what the
// session went back to.
func TestStoreOutageEndsARunThatEndedUnsaid(t *testing.T) {
	for _, queued := range []bool{false, true} {
		t.Run(fmt.Sprintf("queued=%v", queued), func(t *testing.T) {
			mem := memory.New()
			st := &outageStore{Store: mem}
			g := newGate()
			h := storedHarness(t, st, Spec{Model: scriptModel(t, "", `{"turns":[
				{"tool_calls":[{"name":"hold","args":{}}]},
				{"text":"done"},
				{"text":"next done"}]}`), Tools: demoSet(t, holdTool("hold", tools.Killable, g))})
			h.ok(&eventsv1.Prompt{Text: "go"})
			h.waitFor("tool_execution_start", 1)
			waitStored(t, mem, func(s *store.Snapshot) bool { return len(s.Messages) == 2 })
			mark := h.rec.Len()
			tries := st.tries.Load()
			st.down.Store(true)
			ask := func(cmd any) chan any {
				reply := make(chan any, 1)
				go func() {
					res, err := h.sys.Root.RequestFuture(h.pid, cmd, wait).Result()
					if err != nil {
						reply <- err
						return
					}
					reply <- res
				}()
				return reply
			}
			var prompt, state chan any
			if queued {
				prompt = ask(&eventsv1.Prompt{Text: "next"})
				// Queued behind the held tool: its write is the first to
				// fail (get_state would wait for that write).
				eventually.Within(t, wait, func() error {
					if st.tries.Load() == tries {
						return errors.New("no write tried for the queued prompt")
					}
					return nil
				})
				// A read waits for that write too.
				state = ask(&eventsv1.GetState{})
			}
			// The first write to fail holds the tool's result (or the
			// queued prompt); the rest of the run follows at once, while
			// that write is tried again.
			g.open()
			end := h.waitFor("agent_end", 1).GetAgentEnd()
			if end.RunId != "r-1" || end.Reason != "error" || end.GetUsage().GetOutputTokens() == 0 {
				t.Fatalf("agent_end %v, want r-1 ended with error and its usage", end)
			}
			if queued {
				if r := <-prompt; func() bool { rep, ok := r.(*eventsv1.Reply); return !ok || rep.GetError().GetCode() != "store_failed" }() {
					t.Fatalf("the queued prompt was answered %v, want store_failed", r)
				}
				// The read changed nothing: it is answered from what the
				// session went back to, not refused.
				r, _ := (<-state).(*eventsv1.Reply)
				if st := r.GetState(); st == nil || st.State != "idle" || st.MessageCount != 3 || len(st.PromptQueue) != 0 {
					t.Fatalf("get_state during the outage answered %v, want the stored session: idle, 3 messages, nothing queued", r)
				}
			}
			var got []string
			for _, ev := range h.since(mark) {
				got = append(got, events.Type(ev))
			}
			if want := []string{"error", "state_changed", "agent_status", "agent_end"}; !slices.Equal(got, want) {
				t.Fatalf("after the outage the session told %q, want %q", got, want)
			}
			if sc := findType(h.since(mark), "state_changed").GetStateChanged(); sc.From != "executing_tools" || sc.To != "idle" {
				t.Fatalf("state_changed %v, want from the state last told", sc)
			}
			checkLog(t, h.rec.Events())
		})
	}
}

// TestStoreOutageAbandonsAStubbornTool: the store goes down while a tool
// that ignores cancellation runs. The session falls back to what is
// stored and cancels the tool; once the grace has passed get_state counts
// it as abandoned, and no longer once it returns.
func TestStoreOutageAbandonsAStubbornTool(t *testing.T) {
	mem := memory.New()
	st := &outageStore{Store: mem}
	g := newGate()
	stubborn := tools.Define(tools.Spec{Name: "stubborn", Description: "Wait for the test, whatever happens.", Kind: tools.Killable},
		func(context.Context, json.RawMessage, func(string)) (string, error) {
			<-g
			return "stubborn done", nil
		})
	h := storedHarnessWith(t, st, Spec{Model: scriptModel(t, "", `{"turns":[
		{"tool_calls":[{"name":"stubborn","args":{}}]},
		{"text":"done"}]}`), Tools: demoSet(t, stubborn)}, Settings{ToolGrace: 20 * time.Millisecond})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("tool_execution_start", 1)
	waitStored(t, mem, func(s *store.Snapshot) bool { return len(s.Messages) == 2 })
	st.down.Store(true)
	// The queued prompt's write fails, and for good after its retries.
	h.fails(&eventsv1.Prompt{Text: "queued while the store fails"}, "store_failed")
	if end := h.waitFor("agent_end", 1).GetAgentEnd(); end.Reason != "error" {
		t.Fatalf("agent_end %v", end)
	}
	h.pollState("abandoned_tools 1", func(s *eventsv1.SessionState) bool { return s.AbandonedTools == 1 })
	g.open()
	h.pollState("abandoned_tools 0", func(s *eventsv1.SessionState) bool { return s.AbandonedTools == 0 })
}

// TestAbortNotHeldByAWrite: while a write hangs, agent_abort still reaches
// subscribers within the bound; the rest of the run is told once the
// write lands.
func TestAbortNotHeldByAWrite(t *testing.T) {
	g := &gatedStore{Store: memory.New(), pass: make(chan struct{}), entered: make(chan struct{}, 1)}
	h := storedHarness(t, g, Spec{Model: scriptModel(t, "", `{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":20000}}]}]}`), Tools: demoSet(t)})
	h.sys.Root.Send(h.pid, &eventsv1.Prompt{Text: "go"})
	<-g.entered // the run started and its first write hangs (get_state would wait for it too)
	start := time.Now()
	h.sys.Root.Send(h.pid, &eventsv1.Abort{})
	h.waitFor("agent_abort", 1)
	if d := time.Since(start); d > abortBound {
		t.Errorf("agent_abort took %v behind a pending write", d)
	}
	if n := len(eventsOf(h, "message_committed")); n != 0 {
		t.Fatalf("message_committed told before its write landed")
	}
	close(g.pass)
	if end := h.waitFor("agent_end", 1).GetAgentEnd(); end.Reason != "aborted" {
		t.Fatalf("agent_end %v", end)
	}
}

// titledStore records the titles of the batches that landed.
type titledStore struct {
	outageStore
	mu     sync.Mutex
	titles []string
}

func (s *titledStore) Apply(ctx context.Context, id string, b *store.Batch) error {
	err := s.outageStore.Apply(ctx, id, b)
	if err == nil && b.Title != "" {
		s.mu.Lock()
		s.titles = append(s.titles, b.Title)
		s.mu.Unlock()
	}
	return err
}

// TestTitleStoredWithTheFirstPrompt: the title goes to the store with the
// batch that commits the first prompt, and with no other; a first prompt
// whose write failed leaves no title behind, and the next one titles the
// session.
func TestTitleStoredWithTheFirstPrompt(t *testing.T) {
	mem := memory.New()
	st := &titledStore{outageStore: outageStore{Store: mem}}
	h := storedHarness(t, st, Spec{Model: scriptModel(t, "", `{"turns":[{"text":"done"}]}`)})
	st.down.Store(true)
	h.fails(&eventsv1.Prompt{Text: "Lost with its write"}, "store_failed")
	if s := h.state(); s.Title != "" || s.MessageCount != 0 {
		t.Fatalf("after the failed write: title %q, %d messages", s.Title, s.MessageCount)
	}
	st.down.Store(false)
	h.ok(&eventsv1.Prompt{Text: "Kept title\nand the rest"})
	h.waitFor("agent_end", 1)
	h.ok(&eventsv1.Prompt{Text: "second prompt"})
	h.waitFor("agent_end", 2)
	waitStored(t, mem, func(s *store.Snapshot) bool { return len(s.Messages) == 4 })
	if s := h.state(); s.Title != "Kept title" {
		t.Fatalf("get_state title %q", s.Title)
	}
	snap, err := mem.Get(t.Context(), "s1")
	if err != nil || snap.Title != "Kept title" {
		t.Fatalf("stored title %q, %v", snap.Title, err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if !slices.Equal(st.titles, []string{"Kept title"}) {
		t.Fatalf("batches that landed with a title: %q, want one", st.titles)
	}
}
