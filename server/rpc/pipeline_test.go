package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/store/storetest"
)

// TestAbortOvertakesAnAnswer: a command goes to its session once the one
// before it has reached its session, not once it is answered. A prompt
// taken while the agent works is answered once the store has its write;
// an abort sent after it reaches the session meanwhile, and agent_abort
// is out while that write still hangs. The answers keep the commands'
// order. Before, the connection ran one command at a time, and with a
// store whose writes took 2 s agent_abort came 7 s after the abort.
func TestAbortOvertakesAnAnswer(t *testing.T) {
	st := &storetest.Gated{Store: memory.New()}
	rt, err := tack.New(tack.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	in, feed := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), rt, in, outW); outW.Close() }()
	lines := make(chan map[string]any, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Error(err)
				return
			}
			lines <- m
		}
	}()
	// until reads the output up to the first line that match takes, for
	// at most within, noting the responses' ids on the way.
	var responses []string
	until := func(within time.Duration, match func(map[string]any) bool) {
		t.Helper()
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatal("output ended")
				}
				if m["type"] == "response" {
					responses = append(responses, m["id"].(string))
				}
				if match(m) {
					return
				}
			case <-time.After(within):
				t.Fatalf("no such line within %v", within)
			}
		}
	}
	event := func(typ string) func(map[string]any) bool {
		return func(m map[string]any) bool { return m["type"] == typ }
	}
	// Lines are written in order by a goroutine of their own: a server
	// that reads one command at a time must not hold the test up.
	input := make(chan string, 16)
	go func() {
		defer feed.Close()
		for l := range input {
			if _, err := io.WriteString(feed, l+"\n"); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	write := func(l string) { input <- l }
	write(`{"cmd":"create_session","id":"c","session":"s","script":{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":60000}}]},{"text":"done"}]}}`)
	write(`{"cmd":"prompt","id":"p1","session":"s","text":"go"}`)
	until(10*time.Second, event("tool_execution_start"))
	st.HoldWrites()
	defer st.ReleaseWrites() // also when the test fails while the write hangs
	write(`{"cmd":"prompt","id":"p2","session":"s","text":"and then this"}`)
	write(`{"cmd":"abort","id":"a","session":"s"}`)
	// While the write for p2 hangs (the store gives it 10 s).
	until(2*time.Second, event("agent_abort"))
	st.ReleaseWrites()
	until(10*time.Second, func(m map[string]any) bool { return m["id"] == "a" })
	close(input)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if want := []string{"c", "p1", "p2", "a"}; !slices.Equal(responses, want) {
		t.Fatalf("responses %q, want %q: in the commands' order", responses, want)
	}
}
