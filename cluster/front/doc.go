// Package front makes a tack.Runtime the front end of a Tack cluster: a
// runtime that hosts no session (tack.WithSessionsElsewhere), whose sessions
// are the cluster's grains. `tack serve --cluster` runs the HTTP server
// on such a runtime, so HTTP front ends keep no session state and scale
// out beside the members; docs/remote.md shows a deployment.
//
// # Usage
//
//	sys := actor.NewActorSystem()
//	c, err := cluster.Client(sys, "127.0.0.1", cfg)
//	...
//	rt, err := tack.New(tack.WithActorSystem(sys), tack.WithStore(pg),
//		tack.WithSessionsElsewhere(front.New(c)))
//
// Create sends a remotev1.Create to the grain of the new session's id (a
// random one when none is given), which creates it on its member for the
// caller; Request is cluster.Request; Follow is cluster.Follow, which follows a
// session from member to member.
//
// # Concurrency
//
// Every method may be called from any goroutine.
//
// # Testing
//
// The tests run two `tack node --cluster` members and `tack serve
// --cluster` front ends as processes, on PostgreSQL, and drive them over
// HTTP.
package front
