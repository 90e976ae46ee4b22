// Package fsm is the session state machine: the four states of a session
// (docs/state-machine.md) and the events that move between them, as a typed wrapper
// over github.com/looplab/fsm.
//
// # Usage
//
// Each session owns one Machine and moves it with Fire, the one way to
// transition:
//
//	m := fsm.New() // idle; the zero Machine is idle too
//	from, to, err := m.Fire(fsm.Start)
//	if err != nil {
//		// the event is not allowed in m.Current(); nothing changed
//	}
//
// The legal transitions are:
//
//	start        idle                                  -> running
//	first_chunk  running                               -> streaming
//	tool_calls   running, streaming                    -> executing_tools
//	next_turn    running, streaming, executing_tools   -> running
//	finish       running, streaming, executing_tools   -> idle
//	abort        running, streaming, executing_tools   -> idle
//
// running -> running (next_turn after a response with no chunks) is a legal
// self-loop: Fire reports success with from == to.
//
// No looplab callbacks are registered: the caller (the session actor)
// decides what each transition means. Mermaid renders the diagram that
// docs/state-machine.md embeds.
//
// # Memory
//
// An idle session must cost little heap, and a looplab FSM built with
// NewFSM costs about 1.2 KiB and 8 allocations, because it builds its own
// transition, callback and metadata maps. So a Machine holds no looplab FSM:
// only its state and a mutex, 24 bytes, one allocation by New, none when a
// session holds the zero Machine (which is idle) by value. BenchmarkNew
// reports the figures, and BenchmarkNewLooplabFSM those of the
// alternative.
//
// # Speed
//
// A session fires about four events a turn, and a looplab Event call costs
// a context, a lock, map lookups and several allocations (about 1 µs).
// So when the package loads, one looplab FSM is asked what every event
// does in every state, and Fire and Can read that compiled answer from an
// array: no allocation and a few nanoseconds (BenchmarkFire). looplab stays
// the definition: the table above is its table, refusals carry its errors,
// and an event outside Events is still put to it, which refuses it as
// unknown.
//
// # Concurrency
//
// A Machine is safe for concurrent use, though a session's Machine is
// normally used by its actor alone. Different Machines share nothing but
// the immutable compiled table.
//
// # Testing
//
// The tests fire every event in every state against the table above. The
// golden test TestStateDiagramIsCurrent fails when docs/state-machine.md
// drifts from the code; regenerate the file with
//
//	go test ./fsm -run TestStateDiagramIsCurrent -update
package fsm
