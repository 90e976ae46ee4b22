//go:build !race

package tack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/tack-run/tack"
)

// callerFrame is the stack the goroutine that aborts holds of its own
// below Abort: with its other locals, abortFrom's frame is then about
// 170 bytes, as large as the frame of the peer benchmark's goroutine that
// aborts (bench/tack, 168 bytes).
const callerFrame = 64

// TestAbortFitsAFreshStack checks that an abort sent from a goroutine
// that has just started, on Go's smallest stack (2 KiB), never grows that
// stack on its common path. A goroutine's stack is grown by copying it to
// one twice as large; on a VM whose page faults are dear, the new stack's
// fresh memory cost an abort 100 – 300 µs before its message was even
// posted (docs/benchmarks.md, issue 30's finding 14).
//
// The check runs in a child process (alone) started with
// GODEBUG=adaptivestackstart=0, where every goroutine starts on 2 KiB
// instead of the average size the runtime saw. A goroutine can tell that
// its stack moved by the address of a local, which a copy changes. A rare
// deeper path (a contended lock, a timer heap or a cache to grow) may
// still grow it, so a few of the rounds may move; a path that needs more
// stack than the smallest one has moves every round. A race build needs
// twice the stack for the same calls, so the test runs without -race
// (.ci/run runs it so).
func TestAbortFitsAFreshStack(t *testing.T) {
	if !alone(t, "GODEBUG=adaptivestackstart=0") {
		return
	}
	rt, err := tack.New()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := context.Background()
	// Each prompt streams a character every 5 ms, far longer than a
	// round takes: the abort finds the session streaming.
	script := fmt.Sprintf(`{"turns":[{"text":%q,"chunk_size":1,"chunk_delay_ms":5}],"when_exhausted":"repeat_last"}`, strings.Repeat("a", 1000))
	s, err := rt.Spawn(tack.SessionConfig{Script: json.RawMessage(script)})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 20
	moved := 0
	for range rounds {
		if _, err := s.Prompt(ctx, "go"); err != nil {
			t.Fatal(err)
		}
		for ev := range sub.C {
			if ev.GetMessageDelta() != nil {
				break
			}
		}
		done := make(chan bool)
		go func() { done <- abortFrom(t, s) }()
		if <-done {
			moved++
		}
		for ev := range sub.C {
			if ev.GetAgentEnd() != nil {
				break
			}
		}
	}
	t.Logf("%d of %d aborts grew the stack of the goroutine that sent them", moved, rounds)
	if moved > rounds/4 {
		t.Errorf("%d of %d aborts grew the stack of a goroutine that had just started, want at most %d", moved, rounds, rounds/4)
	}
}

// abortFrom aborts s, holding callerFrame bytes of stack of its own, and
// reports whether its goroutine's stack moved meanwhile.
//
//go:noinline
func abortFrom(t *testing.T, s *tack.Session) bool {
	var frame [callerFrame]byte
	frame[len(frame)-1] = 1
	before := uintptr(unsafe.Pointer(&frame))
	if err := s.Abort(context.Background(), tack.AbortOptions{}); err != nil {
		t.Error(err)
	}
	return uintptr(unsafe.Pointer(&frame)) != before || frame[len(frame)-1] != 1
}
