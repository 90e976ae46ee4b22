package actors

import (
	"sync/atomic"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store/memory"
)

// savesCounted counts the calls of its provider's SaveState.
type savesCounted struct {
	llm.Provider
	saves atomic.Int32
}

func (p *savesCounted) SaveState() []byte {
	p.saves.Add(1)
	return p.Provider.(llm.Stateful).SaveState()
}

func (p *savesCounted) LoadState(b []byte) error { return p.Provider.(llm.Stateful).LoadState(b) }

// TestModelStateOnlyToWrite: a stateful model's state is read at each
// request only where something would write it (a store, or a Park): a
// runtime that writes nothing asks for it never, where it was two
// allocations of every turn (issue 30).
func TestModelStateOnlyToWrite(t *testing.T) {
	const script = `{"turns":[{"tool_calls":[{"name":"echo","args":{"text":"a"}}]},{"text":"done"}]}`
	counted := func() (*savesCounted, *llm.Model) {
		m := scriptModel(t, "", script)
		p := &savesCounted{Provider: m.Provider}
		m.Provider = p
		return p, m
	}

	p, m := counted()
	h := newHarnessModel(t, m, nil)
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("agent_end", 1)
	if n := p.saves.Load(); n != 0 {
		t.Errorf("with nothing to write, the model's state was read %d times", n)
	}

	p, m = counted()
	h = storedHarness(t, memory.New(), Spec{ID: "s1", Model: m, Tools: demoSet(t)})
	h.ok(&eventsv1.Prompt{Text: "go"})
	h.waitFor("agent_end", 1)
	if n := p.saves.Load(); n < 2 {
		t.Errorf("with a store, the model's state was read %d times, want one a request at least", n)
	}
}
