package tack_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
)

var crashSeeds = flag.Int("tack.crashseeds", 120, "seeds of TestCrashPropertyRestoredHistory")

// crashable is a store that a test can crash: from then on no write lands
// (they wait until the test ends and then fail), as if the process died.
type crashable struct {
	store.Store
	mu      sync.Mutex
	crashed bool
	dead    chan struct{}
}

func (c *crashable) Apply(ctx context.Context, id string, b *store.Batch) error {
	c.mu.Lock()
	crashed := c.crashed
	c.mu.Unlock()
	if crashed {
		<-c.dead
		return errors.New("the process died")
	}
	return c.Store.Apply(ctx, id, b)
}

func (c *crashable) crash() {
	c.mu.Lock()
	c.crashed = true
	c.mu.Unlock()
}

// TestCrashPropertyRestoredHistory: after random prompts, steers and
// aborts and a crash at a random moment, the restored history is valid and
// holds every message whose message_committed a subscriber saw.
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
	st := &crashable{Store: mem, dead: make(chan struct{})}
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
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Buffer: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]*eventsv1.Message{}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range sub.C {
			if c := ev.GetMessageCommitted(); c != nil {
				mu.Lock()
				seen[c.Index] = c.Message
				mu.Unlock()
			}
		}
	}()
	// The process dies after a random number of commands, at a random
	// moment of whatever is running; it takes no commands after that.
	var log []string
	for range 1 + rng.IntN(10) {
		log = append(log, command(ctx, rng, s))
		time.Sleep(time.Duration(rng.IntN(15)) * time.Millisecond)
	}
	st.crash()
	log = append(log, "crash")
	mu.Lock()
	told := map[int32]*eventsv1.Message{}
	for i, m := range seen {
		told[i] = m
	}
	mu.Unlock()

	second, err := tack.New(tack.WithStore(mem), tack.WithNode("n"))
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	restored, err := second.Session("s")
	if err != nil {
		t.Fatalf("seed %d: restore: %v", seed, err)
	}
	msgs, err := restored.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := llm.Validate(msgs); err != nil {
		t.Fatalf("seed %d (%s): restored history invalid: %v", seed, strings.Join(log, ", "), err)
	}
	for i, m := range told {
		if int(i) >= len(msgs) || !proto.Equal(msgs[i], m) {
			t.Fatalf("seed %d (%s): message %d was told committed but the restored history has %v", seed, strings.Join(log, ", "), i, at(msgs, int(i)))
		}
	}
	sub.Close()
	<-done
}

func at(msgs []*eventsv1.Message, i int) any {
	if i < len(msgs) {
		return msgs[i]
	}
	return "nothing"
}

// command sends one random command and says what it was.
func command(ctx context.Context, rng *rand.Rand, s *tack.Session) string {
	switch rng.IntN(4) {
	case 0, 1:
		s.Prompt(ctx, "p")
		return "prompt"
	case 2:
		s.Steer(ctx, "st", tack.SteerOptions{KeepTools: rng.IntN(2) == 0})
		return "steer"
	default:
		kill := []string{"killable", "all", "none"}[rng.IntN(3)]
		s.Abort(ctx, tack.AbortOptions{KillTools: kill, ClearQueue: rng.IntN(2) == 0})
		return "abort " + kill
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
