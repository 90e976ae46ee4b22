// Package remotev1 holds the protobuf messages that another actor system
// sends a `tack node` besides the events/v1 commands: Lookup and
// SessionRef (the gateway's), Subscribe and Unsubscribe (a session's),
// which name actors with protoactor's PID. Importing it registers them,
// and events/v1 with them, for protoactor remote's serializer.
//
// # Usage
//
//	pid := remotev1.SessionPID("127.0.0.1:8090", "s-1")
//	res, err := system.Root.RequestFuture(pid, &remotev1.Subscribe{Subscriber: me}, time.Second).Result()
//
// docs/remote.md describes every message and its answer.
package remotev1
