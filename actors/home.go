package actors

import "github.com/asynkron/protoactor-go/actor"

// home is where a session lives: its runtime's Env (shared by every
// session, never changed), its own PID, the root context of its actor
// system that it and its goroutines send from, and the Place that spawned
// it, where its sub-agents are made (nil for a session spawned with none).
// It is a small value: goroutines the session starts take a copy and post
// their results back through it.
type home struct {
	env   *Env
	self  *actor.PID
	root  *actor.RootContext
	place Place
}

// post sends msg to the session itself.
func (h home) post(msg any) { h.root.Send(h.self, msg) }

// send sends msg to another actor (a reply, or an event for a subscriber).
func (h home) send(to *actor.PID, msg any) { h.root.Send(to, msg) }
