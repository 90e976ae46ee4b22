// Package tack is an agent runtime: every agent session is an actor
// (protoactor-go) running an explicit state machine — idle, running,
// streaming, executing_tools — in which every command has a defined meaning
// in every state, the conversation history stays valid for the model
// provider however a run is interrupted, and an abort reaches every
// subscriber at once whatever the tools are doing.
//
// # Usage
//
// A Runtime owns the sessions; a Session is a handle that sends commands to
// one of them; a Subscription is a channel of its events:
//
//	rt, err := tack.New()
//	defer rt.Close()
//	s, err := rt.Spawn(tack.SessionConfig{Model: "script:demo"})
//	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{})
//	queued, err := s.Prompt(ctx, "What is in this project?")
//	for ev := range sub.C { ... }
//
// Commands map one to one onto docs/protocol.md's JSON-lines commands; errors
// are *Error values whose Code is the protocol's error code.
//
// # Actor systems
//
// Sessions are protoactor actors. A program with actors of its own runs
// its sessions beside them, in its own actor system (WithActorSystem),
// and has a session send its events to one of its actors as
// *eventsv1.Event messages (Session.SubscribePID). Other actor systems,
// in other processes, reach sessions through `tack node` (package
// server/remote, docs/remote.md).
//
// # Concurrency
//
// A Runtime, its Sessions and Subscriptions are safe for concurrent use.
// Each session processes commands one at a time in arrival order; model
// streams and tools run on goroutines of their own and report back to the
// session, which never blocks.
//
// # Testing
//
// The scripted model (`script:<path>` or SessionConfig.Script, see package
// llm/script) plays a JSON script deterministically and is always
// available, so programs embedding Tack can test their agents without a
// model server. events/eventstest asserts exact event sequences.
package tack
