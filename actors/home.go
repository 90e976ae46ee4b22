package actors

import "github.com/asynkron/protoactor-go/actor"

// home is where a session lives: its runtime's Env (shared by every
// session, never changed), its own PID, its mailbox, which it and its
// goroutines post to and which knows its actor system, and the Place
// that spawned it, where its sub-agents are made (nil for a session
// spawned with none). It is a small value: goroutines the session starts
// take a copy and post their results back through it.
type home struct {
	env   *Env
	self  *actor.PID
	box   *mailbox // set by the mailbox as protoactor spawns the actor
	place Place
}

// post sends msg to the session itself.
func (h home) post(msg any) { h.box.PostUserMessage(msg) }

// root is the root context of the session's actor system, which it and
// its goroutines send to other actors from.
func (h home) root() *actor.RootContext { return h.box.system().Root }

// send sends msg to another actor (a reply, or an event for a subscriber).
func (h home) send(to *actor.PID, msg any) { h.root().Send(to, msg) }
