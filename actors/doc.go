// Package actors runs agent sessions as protoactor-go actors.
//
// A session actor owns its state machine (package fsm), its history, its
// prompt and steering queues, the run in progress and its event stream
// (package events). Receive handles what means the same in every state,
// then dispatches to one short handler per state — idle, running,
// streaming, executingTools — so what a command does in a state is read in
// one function. Each part of a session's state has a file or package of
// its own, named beside its field in the session struct (session.go).
// What spawns, finds, restores and passivates sessions is a Place (package
// placement's Registry).
//
// # Usage
//
// The root package tack is the public API; this package is its engine:
//
//	reg := placement.New(system, &actors.Env{})
//	pid, err := reg.Spawn(actors.Spec{ID: "s1", Model: model, Tools: set})
//	reply, err := system.Root.RequestFuture(pid, &eventsv1.Prompt{Text: "hi"}, time.Second).Result()
//
// Commands are the protobuf messages of events/v1 (Prompt, Steer, Abort,
// GetState, ...) plus SwitchModel, SubscribeSink, SubscribePID,
// Unsubscribe, ReadFeed and LeaveFeed, which carry in-process values;
// every request is answered with an *eventsv1.Reply.
//
// # Concurrency
//
// Receive never blocks and does no I/O. A model request runs in a pump
// goroutine and each tool call in a goroutine of its own; they report back
// with messages tagged with the run and turn they belong to, and reports
// whose tag is no longer current (a cancelled stream, a killed tool) are
// dropped. Cancelled tools are settled by the actor at once; a tool that
// ignores cancellation is counted as abandoned after Env.ToolGrace and is
// never waited for. A panic in a handler becomes an error event; the
// session keeps its committed history and goes on.
//
// # Testing
//
// The tests drive real session actors with scripted models
// (llm/script) and the demo tools, and assert exact event sequences with
// events/eventstest: every cell of the command × state table, abort
// delivery bounds, and a property test over random command sequences.
package actors
