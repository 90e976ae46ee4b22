package tack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/tools"
)

// TestCrashTakesBackNothingTold kills the process (the store takes no
// write from then on) at the instants a soak of tack serve found where a
// subscriber had been told what the store did not hold, then restores the
// session and checks, with checkTold, that nothing told is taken back.
// Each case failed before its fix.
func TestCrashTakesBackNothingTold(t *testing.T) {
	cases := []struct {
		name    string
		script  string
		latency time.Duration
		// until drives the session and returns once the crash is due.
		until func(ctx context.Context, t *testing.T, s *tack.Session, rec *recorder)
	}{{
		// Call ids after a rollback: the next call reused c-1.
		name:   "call ids after a rollback",
		script: `{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":2000}}]},{"tool_calls":[{"name":"sleep","args":{"ms":50}}]},{"text":"done"}]}`,
		until: func(ctx context.Context, t *testing.T, s *tack.Session, rec *recorder) {
			mustPrompt(ctx, t, s, "first", tack.PromptOptions{})
			rec.await(t, func(ev *eventsv1.Event) bool { return ev.GetToolExecutionStart() != nil })
			mustPrompt(ctx, t, s, "again", tack.PromptOptions{IfBusy: "rollback"})
			rec.await(t, func(ev *eventsv1.Event) bool { return ev.GetAgentEnd().GetRunId() == "r-2" })
		},
	}, {
		// A run aborted while running was told ended, and the store
		// still held it in progress: the restore ended it again.
		name:   "abort while running",
		script: `{"turns":[{"delay_ms":3000,"text":"late"}]}`,
		until: func(ctx context.Context, t *testing.T, s *tack.Session, rec *recorder) {
			mustPrompt(ctx, t, s, "first", tack.PromptOptions{})
			rec.await(t, func(ev *eventsv1.Event) bool { return ev.GetRequestStart() != nil })
			if err := s.Abort(ctx, tack.AbortOptions{}); err != nil {
				t.Fatal(err)
			}
			rec.await(t, func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil })
		},
	}, {
		// A call's tool_execution_end went out while the batch's other
		// call ran, and only the next write, at the batch's end, stored
		// its result: the restore answered it "interrupted".
		name:   "a result told while its batch runs",
		script: `{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":10}},{"name":"sleep","args":{"ms":60000}}]},{"text":"done"}]}`,
		until: func(ctx context.Context, t *testing.T, s *tack.Session, rec *recorder) {
			mustPrompt(ctx, t, s, "first", tack.PromptOptions{})
			rec.await(t, func(ev *eventsv1.Event) bool { return ev.GetToolExecutionEnd().GetCallId() == "c-1" })
		},
	}, {
		// prompt_received and agent_start went out before the prompt was
		// stored: the process dies while that write is under way.
		name:    "prompt before its write lands",
		script:  `{"turns":[{"text":"hello"}]}`,
		latency: 200 * time.Millisecond,
		until: func(ctx context.Context, t *testing.T, s *tack.Session, rec *recorder) {
			short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			s.Prompt(short, "first") // its answer waits for the write, which does not land
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memory.New()
			st := &crashable{Store: mem, dead: make(chan struct{})}
			s := spawnOn(t, st, tc.script)
			defer close(st.dead)
			rec, err := record(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			st.setLatency(tc.latency)
			tc.until(ctx, t, s, rec)
			st.crash()
			time.Sleep(20 * time.Millisecond) // what goes out after the crash without a write is told too
			told := rec.close()

			if err := checkTold(ctx, restart(t, mem), told); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func mustPrompt(ctx context.Context, t *testing.T, s *tack.Session, text string, opt tack.PromptOptions) {
	t.Helper()
	if _, err := s.Prompt(ctx, text, opt); err != nil {
		t.Fatal(err)
	}
}

// recorder keeps every event a subscription delivers.
type recorder struct {
	sub  *tack.Subscription
	mu   sync.Mutex
	seen []*eventsv1.Event
	done chan struct{}
}

func record(ctx context.Context, s *tack.Session) (*recorder, error) {
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Buffer: 1 << 16})
	if err != nil {
		return nil, err
	}
	r := &recorder{sub: sub, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for ev := range sub.C {
			r.mu.Lock()
			r.seen = append(r.seen, ev)
			r.mu.Unlock()
		}
	}()
	return r, nil
}

// await waits until an event that match accepts was delivered.
func (r *recorder) await(t *testing.T, match func(*eventsv1.Event) bool) {
	t.Helper()
	eventually.Within(t, 10*time.Second, func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if !slices.ContainsFunc(r.seen, match) {
			return fmt.Errorf("the awaited event never came; %d others did", len(r.seen))
		}
		return nil
	})
}

// close ends the subscription and returns what it delivered.
func (r *recorder) close() []*eventsv1.Event {
	r.sub.Close()
	<-r.done
	return r.seen
}

// TestRejectedSteerRefIsNotReused: a steer refused for a full queue is
// told (steering_received rejected_full, ref st-2); the counter that
// made the ref was not stored, so after a crash the restored session
// handed st-2 out again, to another message.
func TestRejectedSteerRefIsNotReused(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	st := &crashable{Store: mem, dead: make(chan struct{})}
	first, err := tack.New(tack.WithStore(st), tack.WithNode("n"), tack.WithSteeringLimit(1))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	defer close(st.dead)
	s, err := first.Spawn(tack.SessionConfig{ID: "s", Script: json.RawMessage(`{"turns":[{"tool_calls":[{"name":"sleep_immune","args":{"ms":60000}}]},{"text":"done"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := record(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(ctx, t, s, "first", tack.PromptOptions{})
	rec.await(t, func(ev *eventsv1.Event) bool { return ev.GetToolExecutionStart() != nil })
	ref1, err := s.Steer(ctx, "one", tack.SteerOptions{KeepTools: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Steer(ctx, "two", tack.SteerOptions{KeepTools: true}); err == nil {
		t.Fatal("a second steer with a limit of 1 was accepted")
	}
	rec.await(t, func(ev *eventsv1.Event) bool { return ev.GetSteeringReceived().GetStatus() == "rejected_full" })
	var rejected string
	for _, ev := range rec.close() {
		if r := ev.GetSteeringReceived(); r.GetStatus() == "rejected_full" {
			rejected = r.Ref
		}
	}
	st.crash()
	time.Sleep(20 * time.Millisecond)

	restored := restart(t, mem)
	if _, err := restored.State(ctx); err != nil {
		t.Fatal(err)
	}
	ref3, err := restored.Steer(ctx, "three", tack.SteerOptions{KeepTools: true})
	if err != nil || rejected == "" || ref3 == rejected || ref3 == ref1 {
		t.Errorf("accepted %s, told rejected %s; after the restart a steer got %s (%v)", ref1, rejected, ref3, err)
	}
}

// settledStore counts the bytes of waiting results (Volatile.Settled)
// the session writes.
type settledStore struct {
	store.Store
	bytes atomic.Int64
}

func (c *settledStore) Apply(ctx context.Context, id string, b *store.Batch) error {
	if b.Volatile != nil {
		for _, s := range b.Volatile.Settled {
			c.bytes.Add(int64(len(s.Content)))
		}
	}
	return c.Store.Apply(ctx, id, b)
}

// TestWaitingResultsAreNotRewrittenWithoutEnd: a result is stored
// before it is told, and every write stores all the results that wait
// behind an earlier call of the batch; 40 results of 64 KiB settling one
// by one behind a slow call wrote 52 MB of them. Past a budget they wait
// for the batch's commit instead.
func TestWaitingResultsAreNotRewrittenWithoutEnd(t *testing.T) {
	big := tools.Define(tools.Spec{Name: "big", Description: "64 KiB after ms", Schema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"}}}`)},
		func(ctx context.Context, args json.RawMessage, _ func(string)) (string, error) {
			var a struct{ Ms int }
			_ = json.Unmarshal(args, &a)
			time.Sleep(time.Duration(a.Ms) * time.Millisecond)
			return strings.Repeat("x", 64<<10), nil
		})
	calls := []string{`{"name":"sleep","args":{"ms":400}}`}
	for i := 1; i <= 40; i++ {
		calls = append(calls, fmt.Sprintf(`{"name":"big","args":{"ms":%d}}`, 5*i))
	}
	st := &settledStore{Store: memory.New()}
	rt, err := tack.New(tack.WithStore(st), tack.WithNode("n"), tack.WithTools(big))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	s, err := rt.Spawn(tack.SessionConfig{ID: "s", Tools: []string{"big"},
		Script: json.RawMessage(`{"turns":[{"tool_calls":[` + strings.Join(calls, ",") + `]},{"text":"done"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := record(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(context.Background(), t, s, "go", tack.PromptOptions{})
	rec.await(t, func(ev *eventsv1.Event) bool { return ev.GetAgentEnd() != nil })
	if n := st.bytes.Load(); n > 1<<20 {
		t.Errorf("%d KiB of waiting results written for 2,560 KiB of results", n>>10)
	}
	if msgs, err := s.Messages(context.Background()); err != nil || len(msgs) != 44 {
		t.Fatalf("history of %d messages, %v", len(msgs), err)
	}
}

// TestExportTellsNothingACrashTakesBack: an export answers once what the
// session holds is stored, as get_messages does: a prompt whose write is
// under way is in the export only once that write has landed, so a crash
// before it leaves a session with everything the export showed. Before,
// the export answered at once, with the prompt the crash then took back.
func TestExportTellsNothingACrashTakesBack(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	st := &crashable{Store: mem, dead: make(chan struct{})}
	s := spawnOn(t, st, `{"turns":[{"text":"hello"}]}`)
	defer close(st.dead)
	st.setLatency(300 * time.Millisecond)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	go s.Prompt(short, "first") // its answer waits for the write
	time.Sleep(20 * time.Millisecond)
	exported := make(chan []string, 1)
	go func() {
		var out []string
		// The write never lands: the export waits out its timeout.
		wait, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if exp, err := s.Export(wait); err == nil {
			for _, m := range exp.Messages {
				out = append(out, m.Role+":"+m.Content)
			}
		}
		exported <- out
	}()
	time.Sleep(20 * time.Millisecond)
	st.crash() // the write under way never lands
	restored := restart(t, mem)
	all, err := restored.AllMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := <-exported
	if len(got) > len(all) {
		t.Fatalf("the export showed %q; after the crash the session has %d messages", got, len(all))
	}
}

// heldSource is a store whose writes of session "s" wait until a crash
// (when they fail); every other session's go through.
type heldSource struct {
	store.Store
	crashed chan struct{}
}

func (h *heldSource) Apply(ctx context.Context, id string, b *store.Batch) error {
	if id == "s" {
		<-h.crashed
		return errors.New("the process died")
	}
	return h.Store.Apply(ctx, id, b)
}

// TestForkTakesNothingACrashTakesBack: a fork starts from what its
// source has stored, as an export does: a prompt whose write is under way
// is in no fork until that write lands, so a crash before it leaves no
// fork holding a message its source lost. Before, the source answered the
// fork's start at once, with the prompt, and the fork stored it.
func TestForkTakesNothingACrashTakesBack(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	st := &heldSource{Store: mem, crashed: make(chan struct{})}
	s := spawnOn(t, st, `{"turns":[{"text":"hello"}]}`)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	go s.Prompt(short, "first") // its answer waits for the write
	var forkErr error
	for range 200 { // until the prompt is committed: index 1 is in range
		wait, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, forkErr = s.Fork(wait, 1, "f")
		cancel()
		if tack.Code(forkErr) != "bad_request" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if tack.Code(forkErr) == "bad_request" {
		t.Fatalf("the prompt was never committed: %v", forkErr)
	}
	close(st.crashed) // the source's write never lands
	second, err := tack.New(tack.WithStore(mem), tack.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	source, err := second.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	kept, err := source.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fork, err := second.Session("f")
	if forkErr != nil || err != nil {
		return // no fork was made: nothing holds what the crash took
	}
	forked, err := fork.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(forked) > len(kept) {
		t.Fatalf("the fork holds %d messages (%v); after the crash its source has %d", len(forked), forked, len(kept))
	}
}

// spawnOn is session "s" of script on a runtime (node "n") over st,
// closed when the test ends.
func spawnOn(t *testing.T, st store.Store, script string) *tack.Session {
	t.Helper()
	rt, err := tack.New(tack.WithStore(st), tack.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	s, err := rt.Spawn(tack.SessionConfig{ID: "s", Script: json.RawMessage(script)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
