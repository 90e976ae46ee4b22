package actors

import (
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	cmap "github.com/orcaman/concurrent-map"
)

// registryBuckets is how many buckets the process table of a system made
// by NewSystem has, each a concurrent map of 32 shards.
const registryBuckets = 64

// NewSystem returns an actor system for sessions: protoactor's, its logs
// discarded, and its dead-letter throttle goroutine living only briefly
// after late reports to a closed session; opts, applied after these,
// may say otherwise. A runtime given no system (tack.WithActorSystem)
// makes its own with NewSystem().
//
// Its process table has 64 buckets instead of protoactor's 1,024: 2,048
// shard maps in all, not 32,768. A Go map keeps the memory of the most
// entries it held, and the first entry of an empty one allocates a group
// of eight slots (288 bytes). With protoactor's table, nearly every
// process registered among the first tens of thousands lands in a shard
// of its own, and its group stays when the process is gone: a session
// that parked or closed leaves it behind. With this one the processes
// share the groups, and the table costs about 160 KiB instead of 2.6 MiB
// before the first session (TestParkedSessionHeapBudget). Lookups stay
// as they were: a PID keeps the process it resolved, and a shard's lock
// is held for one map operation.
func NewSystem(opts ...actor.ConfigOption) *actor.ActorSystem {
	sys := actor.NewActorSystem(append([]actor.ConfigOption{actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}), actor.WithDeadLetterThrottleInterval(10 * time.Millisecond)}, opts...)...)
	resize(sys.ProcessRegistry, registryBuckets)
	return sys
}

// resize gives r a table of n buckets holding what its table held (the
// processes protoactor registers as it starts a system). It is for a
// system that nothing uses yet.
func resize(r *actor.ProcessRegistryValue, n int) {
	table := &actor.SliceMap{LocalPIDs: make([]cmap.ConcurrentMap, n)}
	for i := range table.LocalPIDs {
		table.LocalPIDs[i] = cmap.New()
	}
	for _, bucket := range r.LocalPIDs.LocalPIDs {
		bucket.IterCb(func(id string, p any) { table.GetBucket(id).Set(id, p) })
	}
	r.LocalPIDs = table
}
