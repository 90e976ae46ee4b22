package actors

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// TestNewSystem: the system's process table has registryBuckets buckets,
// what protoactor registered as it started the system is still found
// there, and actors spawn, answer and stop as on protoactor's own table.
func TestNewSystem(t *testing.T) {
	sys := NewSystem()
	defer sys.Shutdown()
	table := sys.ProcessRegistry.LocalPIDs.LocalPIDs
	if len(table) != registryBuckets {
		t.Fatalf("%d buckets, want %d", len(table), registryBuckets)
	}
	for _, id := range []string{"deadletter", "eventstream"} {
		if p, ok := sys.ProcessRegistry.GetLocal(id); !ok || p == nil {
			t.Errorf("%s is not registered", id)
		}
	}
	echo := actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Respond(s)
		}
	})
	pids := make([]*actor.PID, 1000)
	for i := range pids {
		pids[i] = sys.Root.Spawn(echo)
	}
	for _, pid := range pids {
		got, err := sys.Root.RequestFuture(pid, "hi", 5*time.Second).Result()
		if err != nil || got != "hi" {
			t.Fatalf("%s answered %v, %v", pid.Id, got, err)
		}
	}
	for _, pid := range pids {
		if err := sys.Root.StopFuture(pid).Wait(); err != nil {
			t.Fatal(err)
		}
		if _, ok := sys.ProcessRegistry.GetLocal(pid.Id); ok {
			t.Fatalf("%s is still registered once stopped", pid.Id)
		}
	}
}
