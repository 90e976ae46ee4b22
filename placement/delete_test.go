package placement

import (
	"context"
	"errors"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/actors"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// TestDeleteCleansBeforeTheIDIsFree: DeleteOptions.Clean runs once the
// session is gone and before its id is free: while it runs, Create
// refuses the id and a sub-agent's of it, so what Clean removes (the
// workspace) is never a new session's of the id.
func TestDeleteCleansBeforeTheIDIsFree(t *testing.T) {
	sys, reg := testRegistry(t, &actors.Env{})
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*eventsv1.Abort); ok {
			c.Respond(&eventsv1.Reply{})
		}
	}))
	register(reg, "s1", pid)

	var during []error
	cleaned := false
	err := reg.Delete(context.Background(), "s1", DeleteOptions{Clean: func() {
		cleaned = true
		if reg.Loaded("s1") {
			t.Error("s1 is still loaded when Clean runs")
		}
		for _, id := range []string{"s1", "s1/sub-1"} {
			_, err := reg.Create(context.Background(), actors.Spec{ID: id})
			during = append(during, err)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !cleaned {
		t.Fatal("Clean did not run")
	}
	for i, err := range during {
		if !errors.Is(err, ErrSessionExists) {
			t.Errorf("Create %d while Clean ran: %v, want ErrSessionExists", i, err)
		}
	}
	if reg.beingDeleted("s1") {
		t.Error("s1 is still being deleted after Delete returned")
	}

	// Clean does not run when there was nothing to delete.
	err = reg.Delete(context.Background(), "none", DeleteOptions{Clean: func() { t.Error("Clean ran for a session that never was") }})
	if !errors.Is(err, ErrNoSession) {
		t.Fatalf("Delete(none) = %v, want ErrNoSession", err)
	}
}
