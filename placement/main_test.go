package placement

import (
	"log/slog"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"

	"github.com/tack-run/tack/actors"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testRegistry is a registry of env in an actor system that logs nothing,
// both stopped when t ends.
func testRegistry(t *testing.T, env *actors.Env) (*actor.ActorSystem, *Registry) {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }))
	t.Cleanup(sys.Shutdown)
	reg := New(sys, env)
	t.Cleanup(reg.Shutdown)
	return sys, reg
}

// register makes pid the loaded session id of reg, as a spawn would.
func register(reg *Registry, id string, pid *actor.PID) {
	reg.mu.Lock()
	reg.registerLocked(id, pid, "")
	reg.mu.Unlock()
}
