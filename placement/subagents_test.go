package placement

import (
	"context"
	"errors"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/llm"
)

// TestNoSubagentOfAClosedParent: without a store, a sub-agent is made
// only while its parent is loaded. A parent's Close ends the sub-agents
// it finds; one its running call made just after would have outlived it.
func TestNoSubagentOfAClosedParent(t *testing.T) {
	sys, reg := testRegistry(t, &actors.Env{})
	model := &llm.Model{Name: "m", ID: "m"} // never asked: the sessions take no prompt
	if _, err := reg.Create(context.Background(), actors.Spec{ID: "p/sub-1", Model: model}); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a sub-agent of no parent: %v, want ErrNoSession", err)
	}
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	register(reg, "p", pid)
	if _, err := reg.Create(context.Background(), actors.Spec{ID: "p/sub-1", Model: model}); err != nil {
		t.Fatalf("a sub-agent of a loaded parent: %v", err)
	}
	if !reg.Close("p") || reg.Loaded("p/sub-1") {
		t.Fatal("the parent's close left its sub-agent")
	}
	if _, err := reg.Create(context.Background(), actors.Spec{ID: "p/sub-2", Model: model}); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a sub-agent of a closed parent: %v, want ErrNoSession", err)
	}
}
