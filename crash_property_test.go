package tack_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

var crashSeeds = flag.Int("tack.crashseeds", 120, "seeds of TestCrashPropertyRestoredHistory")

// crashable is a store that a test can crash: from then on no write lands
// (they wait until the test ends and then fail), as if the process died.
// Each write takes latency first, as a real store's does: what is told
// before its write lands is then told for a while before it is stored.
type crashable struct {
	store.Store
	latency time.Duration
	mu      sync.Mutex
	crashed bool
	dead    chan struct{}
}

func (c *crashable) Apply(ctx context.Context, id string, b *store.Batch) error {
	c.mu.Lock()
	latency := c.latency
	c.mu.Unlock()
	time.Sleep(latency)
	c.mu.Lock()
	crashed := c.crashed
	c.mu.Unlock()
	if crashed {
		<-c.dead
		return errors.New("the process died")
	}
	return c.Store.Apply(ctx, id, b)
}

func (c *crashable) setLatency(d time.Duration) {
	c.mu.Lock()
	c.latency = d
	c.mu.Unlock()
}

func (c *crashable) crash() {
	c.mu.Lock()
	c.crashed = true
	c.mu.Unlock()
}

// TestCrashPropertyRestoredHistory: after random prompts (with every
// if_busy), steers and aborts (at every point, some rolling back) and a
// crash at a random moment, the restored session takes back nothing a
// subscriber was told (told.go's check) and its history is valid.
func TestCrashPropertyRestoredHistory(t *testing.T) {
	for seed := range *crashSeeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			crashOnce(t, uint64(seed))
		})
	}
}

func crashOnce(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	mem := memory.New()
	st := &crashable{Store: mem, latency: time.Duration(rng.IntN(5)) * time.Millisecond, dead: make(chan struct{})}
	first, err := tack.New(tack.WithStore(st), tack.WithNode("n"), tack.WithToolGrace(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	defer close(st.dead)
	s, err := first.Spawn(tack.SessionConfig{ID: "s", Script: json.RawMessage(randomScript(rng))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec, err := record(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	// The process dies after a random number of commands, at a random
	// moment of whatever is running, often right after the last command
	// (while its writes are under way); it takes no commands after that.
	var log []string
	n := 1 + rng.IntN(10)
	for i := range n - 1 {
		log = append(log, command(ctx, rng, s, i))
		time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
	}
	if rng.IntN(2) == 0 {
		log = append(log, command(ctx, rng, s, n-1))
		time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
	} else { // the process dies before the last command is answered
		last, stop := context.WithTimeout(ctx, 100*time.Millisecond)
		what := make(chan string, 1)
		wait := time.Duration(rng.IntN(3)) * time.Millisecond
		go func() { what <- command(last, rng, s, n-1) }()
		defer func() { stop(); <-what }() // its answer never comes: the store is dead
		time.Sleep(wait)
		log = append(log, "one more command")
	}
	st.crash()
	log = append(log, "crash")
	// What the dead process told: everything up to the crash, and what it
	// published after it without a write (which is what this test hunts).
	time.Sleep(30 * time.Millisecond)
	told := rec.close()
	if err := checkTold(ctx, restart(t, mem), told); err != nil {
		t.Fatalf("seed %d (%s): %v", seed, strings.Join(log, ", "), err)
	}
}

// restart is the session "s" of mem, as a new process on that store
// restores it.
func restart(t *testing.T, mem store.Store) *tack.Session {
	t.Helper()
	second, err := tack.New(tack.WithStore(mem), tack.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Close)
	restored, err := second.Session("s")
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	return restored
}

// checkTold checks that the restored session keeps everything told holds:
// its history is valid and has every message told committed; every
// prompt and steering message told accepted is in the history (rolled
// back or not), still queued, or was told dropped; a run told started
// and not ended is ended by the restore, a run told ended is not ended
// again, and no run id told is used again; no tool call id repeats.
func checkTold(ctx context.Context, restored *tack.Session, told []*eventsv1.Event) error {
	msgs, err := restored.Messages(ctx)
	if err != nil {
		return err
	}
	if err := llm.Validate(msgs); err != nil {
		return fmt.Errorf("restored history invalid: %v", err)
	}
	all, err := restored.AllMessages(ctx)
	if err != nil {
		return err
	}
	state, err := restored.State(ctx) // waits for the restore's events to be told
	if err != nil {
		return err
	}
	sub, err := restored.Subscribe(ctx, tack.SubscribeOptions{Buffered: true, Buffer: 1 << 12})
	if err != nil {
		return err
	}
	defer sub.Close()
	var after []*eventsv1.Event
	for len(sub.C) > 0 {
		after = append(after, <-sub.C)
	}

	texts := map[string]bool{}
	for _, m := range all {
		if m.Role == llm.RoleUser {
			texts[m.Content] = true
		}
	}
	for _, p := range state.PromptQueue {
		texts[p] = true
	}
	for _, st := range state.SteeringQueue {
		texts[st.Text] = true
	}
	started, ended, accepted := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, ev := range told {
		switch {
		case ev.GetMessageCommitted() != nil:
			c := ev.GetMessageCommitted()
			inPlace := int(c.Index) < len(msgs) && proto.Equal(msgs[c.Index], c.Message)
			if !inPlace && !slices.ContainsFunc(all, func(m *eventsv1.Message) bool { return proto.Equal(withoutMarks(m), c.Message) }) {
				return fmt.Errorf("message %d was told committed but the restored history has %v", c.Index, at(msgs, int(c.Index)))
			}
		case ev.GetAgentStart() != nil:
			started[ev.GetAgentStart().RunId] = true
		case ev.GetAgentEnd() != nil:
			ended[ev.GetAgentEnd().RunId] = true
		case ev.GetToolExecutionEnd() != nil:
			if e := ev.GetToolExecutionEnd(); !slices.ContainsFunc(all, func(m *eventsv1.Message) bool {
				return m.ToolCallId == e.CallId && m.Content == e.Result
			}) && len(state.PendingApprovals) == 0 && state.PendingQuestion == nil {
				return fmt.Errorf("call %s was told ended with %q, and the restored history has no such result", e.CallId, e.Result)
			}
		case ev.GetPromptReceived() != nil:
			accepted[ev.GetPromptReceived().Text] = true
		case ev.GetPromptQueued() != nil:
			accepted[ev.GetPromptQueued().Text] = true
		case ev.GetSteeringReceived().GetStatus() == "accepted":
			accepted[ev.GetSteeringReceived().Text] = true
		case ev.GetPromptDropped() != nil:
			delete(accepted, ev.GetPromptDropped().Text)
		case ev.GetSteeringDropped() != nil:
			delete(accepted, ev.GetSteeringDropped().Text)
		}
	}
	for text := range accepted {
		if !texts[text] {
			return fmt.Errorf("%q was told accepted but the restored session has it nowhere", text)
		}
	}
	endedAgain := map[string]bool{}
	for _, ev := range after {
		if e := ev.GetAgentEnd(); e != nil {
			endedAgain[e.RunId] = true
		}
	}
	for r := range started {
		switch {
		case ended[r] && endedAgain[r]:
			return fmt.Errorf("run %s was told ended, and the restore ends it again", r)
		case !ended[r] && !endedAgain[r] && state.GetRunId() != r:
			return fmt.Errorf("run %s was told started, and the restore neither ends nor resumes it", r)
		}
	}
	calls := map[string]bool{}
	for _, m := range all {
		for _, c := range m.ToolCalls {
			if calls[c.Id] {
				return fmt.Errorf("tool call id %s is used twice in the history", c.Id)
			}
			calls[c.Id] = true
		}
	}
	// The next run is numbered past every run told.
	sub2, err := restored.Subscribe(ctx, tack.SubscribeOptions{Types: []string{"agent_start"}})
	if err != nil {
		return err
	}
	defer sub2.Close()
	if _, err := restored.Prompt(ctx, "after the restart", tack.PromptOptions{IfBusy: "interrupt"}); err != nil {
		return err
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-sub2.C:
			if !ok {
				return errors.New("the restored session ended")
			}
			if ev.GetAgentStart() == nil { // events_lost
				continue
			}
			if r := ev.GetAgentStart().RunId; started[r] {
				return fmt.Errorf("run id %s is used again after the restart", r)
			}
			return nil
		case <-timeout:
			return errors.New("no run started after the restart")
		}
	}
}

// withoutMarks is m as it was committed: before a rollback marked it.
func withoutMarks(m *eventsv1.Message) *eventsv1.Message {
	c := proto.Clone(m).(*eventsv1.Message)
	c.RolledBack = false
	return c
}

func at(msgs []*eventsv1.Message, i int) any {
	if i < len(msgs) {
		return msgs[i]
	}
	return "nothing"
}

// command sends one random command, the i-th, and says what it was.
func command(ctx context.Context, rng *rand.Rand, s *tack.Session, i int) string {
	text := fmt.Sprintf("p%d", i)
	switch rng.IntN(4) {
	case 0, 1:
		ifBusy := []events.IfBusy{events.IfBusyQueue, events.IfBusySteer, events.IfBusyInterrupt, events.IfBusyRollback}[rng.IntN(4)]
		s.Prompt(ctx, text, tack.PromptOptions{IfBusy: ifBusy})
		return "prompt " + string(ifBusy)
	case 2:
		s.Steer(ctx, text, tack.SteerOptions{KeepTools: rng.IntN(2) == 0})
		return "steer"
	default:
		kill := []events.KillTools{events.KillKillable, events.KillAll, events.KillNone}[rng.IntN(3)]
		at := []events.At{events.AtNow, events.AtAfterResponse, events.AtAfterTools}[rng.IntN(3)]
		rollback := rng.IntN(3) == 0
		s.Abort(ctx, tack.AbortOptions{KillTools: kill, ClearQueue: rng.IntN(2) == 0, At: at, Rollback: rollback, Timeout: 50 * time.Millisecond})
		return fmt.Sprintf("abort %s %s rollback=%v", kill, at, rollback)
	}
}

// randomScript mixes chunked text, tool calls (quick, immune and
// stubborn) and failures.
func randomScript(rng *rand.Rand) string {
	var turns []string
	for range 2 + rng.IntN(5) {
		switch rng.IntN(5) {
		case 0:
			turns = append(turns, `{"text":"a streamed answer","chunk_size":3,"chunk_delay_ms":2}`)
		case 1:
			turns = append(turns, `{"text":"calling","tool_calls":[{"name":"echo","args":{"text":"x"}},{"name":"sleep","args":{"ms":15}}]}`)
		case 2:
			turns = append(turns, `{"tool_calls":[{"name":"sleep_immune","args":{"ms":10}},{"name":"sleep_stubborn","args":{"ms":30}}]}`)
		case 3:
			turns = append(turns, `{"text":"part","error":{"status":500,"message":"boom"}}`)
		default:
			turns = append(turns, `{"thinking":"hmm","text":"done","delay_ms":5}`)
		}
	}
	return `{"turns":[` + strings.Join(turns, ",") + `],"when_exhausted":"repeat_last"}`
}
