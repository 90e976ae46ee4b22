// Package cluster is what the members and the clients of a Tack cluster
// share: how they find each other (a cluster provider of this package's
// own behind protoactor's ClusterProvider interface, chosen by Config:
// members register in PostgreSQL or etcd with a registration that lapses
// unless renewed, or poll each other's automanaged health endpoints), how
// they find a session (disthash identity lookup over the kind
// remotev1.SessionKind, the session id being the identity), and the calls
// a client makes: Request (a command to a session by id, wherever it
// lives; Read for one that changes nothing, sent again when its member
// died with it) and Follow (a subscriber that follows a session from
// member to member). A client of an automanaged cluster polls the seeds
// with a provider of its own, which takes back a member it dropped once
// that member answers again. For members it also tells when the cluster
// has dropped them (Cluster.Dropped, Drop: their registration lapsed, or
// they found themselves left out) and finds live members an automanaged
// member dropped (Cluster.WatchBlocked). docs/remote.md is the reference.
//
// # Usage
//
//	sys := actor.NewActorSystem()
//	c, err := cluster.Client(sys, "127.0.0.1", cluster.Config{Name: "tack", Seeds: []string{"10.0.0.1:6330", "10.0.0.2:6330"}})
//	...
//	reply, err := cluster.Reply(ctx, c, "s1", &eventsv1.Prompt{Text: "hi"})
//	...
//	cluster.Close(c)
//
// # Concurrency
//
// Request blocks its caller; call it from as many goroutines as needed.
// Follow's actor handles one event at a time, on the actor's goroutine.
//
// # Testing
//
// The tests of this package and of server/remote start real `tack node
// --cluster` processes and join them as a client through this package;
// here the client polls the members through TCP proxies a test can cut.
package cluster
