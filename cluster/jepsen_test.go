package cluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/cluster"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// outcome is what a client learnt of one prompt it sent.
type outcome int

const (
	// accepted: answered without error; it must not be lost.
	accepted outcome = iota
	// rejected: answered with an error that says it was not done, or never
	// delivered (a dead letter).
	rejected
	// unknown: no answer, or not_alive from a member that lost track of
	// it: it may or may not have been done, but never twice.
	unknown
)

// TestClusterJepsen: clients prompt one session through random members
// and the cluster client while the member that runs it is killed and
// restarted, twice. Every prompt and every event is recorded, and then:
// no prompt is in the history twice; every accepted prompt is in the
// history, in the queue or told dropped; no rejected prompt is anywhere;
// the events the follower got never reuse a seq, and every gap is told by
// events_lost.
func TestClusterJepsen(t *testing.T) {
	tc := startCluster(t)
	id := sessionID("c")
	var turns []map[string]any
	for range 200 {
		turns = append(turns, map[string]any{"text": "working", "tool_calls": []map[string]any{{"name": "sleep", "args": map[string]int{"ms": 150}}}},
			map[string]any{"text": "done"})
	}
	script, _ := json.Marshal(map[string]any{"turns": turns})
	if _, err := cluster.Reply(within(t, wait), client, id, &eventsv1.CreateSession{Script: &eventsv1.RawJSON{Json: script}}); err != nil {
		t.Fatal(err)
	}
	rec := follow(t, id, 0)

	const workers, each = 4, 12
	var (
		mu       sync.Mutex
		outcomes = map[string]outcome{}
		acks     atomic.Int32
		wg       sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				text := fmt.Sprintf("p-%d-%d", w, i)
				o := tc.prompt(id, text)
				mu.Lock()
				outcomes[text] = o
				mu.Unlock()
				if o == accepted {
					acks.Add(1)
				}
				time.Sleep(time.Duration(rand.IntN(150)) * time.Millisecond) // pacing, not an assertion
			}
		}()
	}

	// Twice: once some prompts got through, kill the session's member and
	// start it again.
	for round, from := 1, int32(0); round <= 2; round++ {
		eventually.Within(t, 3*wait, func() error {
			if n := acks.Load(); n < from+workers*each/4 {
				return fmt.Errorf("round %d: only %d prompts accepted", round, n)
			}
			return nil
		})
		from = acks.Load()
		host := tc.host(t, id)
		tc.member(host).Kill()
		t.Logf("round %d: killed member %d after %d accepted prompts", round, host, acks.Load())
		tc.start(t, host)
		tc.converged(t, 3*wait)
	}
	wg.Wait()

	// Let the session settle: idle, and every run told.
	st := eventually.Value(t, 3*wait, func() (*eventsv1.SessionState, error) {
		r, err := cluster.Reply(within(t, wait), client, id, &eventsv1.GetState{})
		if err != nil || r.GetState().State != "idle" {
			return nil, fmt.Errorf("the session did not settle: %v %v", r, err)
		}
		return r.GetState(), nil
	})
	r, err := cluster.Reply(within(t, wait), client, id, &eventsv1.GetMessages{All: true})
	if err != nil {
		t.Fatal(err)
	}
	inHistory := map[string]int{}
	for _, m := range r.GetMessages().GetMessages() {
		if m.Role == "user" {
			inHistory[m.Content]++
		}
	}
	queued := map[string]int{}
	for _, q := range st.PromptQueue {
		queued[q]++
	}
	dropped := map[string]int{}
	for _, ev := range rec.all() {
		if d := ev.GetPromptDropped(); d != nil {
			dropped[d.Text]++
		}
	}

	counts := map[outcome]int{}
	for text, o := range outcomes {
		counts[o]++
		n := inHistory[text] + queued[text] + dropped[text]
		switch {
		case inHistory[text] > 1:
			t.Errorf("%s is in the history %d times", text, inHistory[text])
		case o == accepted && n != 1:
			t.Errorf("%s was accepted: history %d, queue %d, dropped %d", text, inHistory[text], queued[text], dropped[text])
		case o == rejected && n != 0:
			t.Errorf("%s was rejected: history %d, queue %d, dropped %d", text, inHistory[text], queued[text], dropped[text])
		case o == unknown && n > 1:
			t.Errorf("%s (unknown) is there %d times", text, n)
		}
	}
	t.Logf("prompts: %d accepted, %d rejected, %d unknown; %d user messages, %d queued",
		counts[accepted], counts[rejected], counts[unknown], len(inHistory), len(st.PromptQueue))

	checkSeqs(t, rec.all())
}

// lookupTimeout bounds a lookup at a member, which may be dead.
const lookupTimeout = 3 * time.Second

// prompt sends one prompt to session id by a random way: through the
// cluster client, or through a random member's forwarder.
func (tc *testCluster) prompt(id, text string) outcome {
	msg := &eventsv1.Prompt{Text: text}
	k := rand.IntN(4)
	if k == 3 {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		r, err := cluster.Reply(ctx, client, id, msg)
		switch {
		case err == nil:
			return accepted
		case errors.Is(err, cluster.ErrUnreached):
			return rejected
		case r != nil && r.Error.Code != events.CodeNotAlive:
			return rejected
		}
		return unknown
	}
	m := tc.member(k)
	res, err := sys.Root.RequestFuture(remotev1.GatewayPID(m.Addr), &remotev1.Lookup{Session: id}, lookupTimeout).Result()
	ref, ok := res.(*remotev1.SessionRef)
	if err != nil || !ok || ref.Pid == nil {
		return rejected // nothing sent
	}
	res, err = sys.Root.RequestFuture(ref.Pid, msg, wait).Result()
	r, ok := res.(*eventsv1.Reply)
	switch {
	case errors.Is(err, actor.ErrDeadLetter):
		return rejected
	case err != nil || !ok:
		return unknown
	case r.Error == nil:
		return accepted
	case r.Error.Code == events.CodeNotAlive && !strings.Contains(r.Error.Message, cluster.ErrUnreached.Error()):
		return unknown
	}
	return rejected
}

// checkSeqs checks the follower's events: seqs go up by one, except
// across an events_lost, which tells exactly the numbers skipped.
func checkSeqs(t *testing.T, evs []*eventsv1.Event) {
	t.Helper()
	var prev uint64
	var lost *eventsv1.EventsLost
	gaps := 0
	for i, ev := range evs {
		if l := ev.GetEventsLost(); l != nil {
			if l.From != prev+1 || l.To < l.From {
				t.Fatalf("event %d: events_lost %v after seq %d", i, l, prev)
			}
			lost = l
			gaps++
			continue
		}
		want := prev + 1
		if lost != nil {
			want = lost.To + 1
		}
		if ev.Seq != want {
			t.Fatalf("event %d (%s) has seq %d after %d (events_lost %v), want %d", i, events.Type(ev), ev.Seq, prev, lost, want)
		}
		prev, lost = ev.Seq, nil
	}
	t.Logf("%d events, %d gaps told", len(evs), gaps)
}
