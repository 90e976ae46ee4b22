package actors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/spec"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/store/storetest"
)

// TestCompactionsWhileAWriteIsUnderWay: compactions that take effect while
// a write is under way are stored whole by the write after it, whatever
// the store held: two compactions behind one write, and one that archives
// messages the store never took. The store then holds what the session
// does (get_messages all), and no error is told. The rewrite used to
// start at the archive's end, as if the store held the archive: the first
// summary was lost and a message stored twice, or the store refused the
// gap for good and a healthy store took the session down.
func TestCompactionsWhileAWriteIsUnderWay(t *testing.T) {
	for _, c := range []struct {
		name   string
		keep   int
		before int      // prompts stored before writes are held
		held   []string // commands sent while the first write waits
	}{
		{"two compactions", 10, 6, []string{"u7", "compact", "u8", "compact"}},
		{"two compactions, a short keep", 2, 6, []string{"u7", "compact", "u8", "compact"}},
		{"a compaction of unstored messages", 2, 3, []string{"u4", "u5", "compact"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.New()
			st := &storetest.Gated{Store: mem}
			h := storedHarness(t, st, Spec{Model: scriptModel(t, "", `{"turns":[{"text":"ok"}],"when_exhausted":"repeat_last"}`),
				Tools: demoSet(t), Stored: &spec.Session{Context: &llm.ContextConfig{KeepRecent: new(c.keep)}}})
			for i := 1; i <= c.before; i++ {
				h.ok(&eventsv1.Prompt{Text: fmt.Sprint("u", i)})
				h.waitFor("agent_end", i)
			}
			waitStored(t, mem, func(s *store.Snapshot) bool { return len(s.Messages) == 2*c.before && s.State == "idle" })
			st.HoldWrites()
			defer st.ReleaseWrites()
			var replies []*actor.Future
			for _, cmd := range c.held {
				var m any = &eventsv1.Prompt{Text: cmd}
				if cmd == "compact" {
					m = &eventsv1.Compact{}
				}
				replies = append(replies, h.sys.Root.RequestFuture(h.pid, m, wait))
				// What the command set off (a run, a summary) is done by
				// then; the fixed session stores it right whatever the order.
				time.Sleep(100 * time.Millisecond)
			}
			st.ReleaseWrites()
			for _, r := range replies {
				if res, err := r.Result(); err != nil || res.(*eventsv1.Reply).GetError() != nil {
					t.Fatalf("reply %v, %v", res, err)
				}
			}
			all := h.ok(&eventsv1.GetMessages{All: true}).GetMessages().GetMessages()
			h.ok(&eventsv1.GetState{}) // answered once everything told is stored
			snap, err := mem.Load(context.Background(), "s1")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := contents(snap.Messages), contents(all); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("the store holds %q,\nthe session %q", got, want)
			}
			if errs := eventsOf(h, "error"); len(errs) > 0 {
				t.Fatalf("a healthy store, and the session told %v", errs[0])
			}
		})
	}
}
