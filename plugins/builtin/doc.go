// Package builtin registers Tack's built-in plugins under their protocol
// names: "approval", "loop_detection", "large_result_offload", "limits"
// and "ask_user". Only cmd/tack and tests import it, so that a program
// embedding Tack chooses the plugins it carries.
//
// # Usage
//
//	reg := plugins.NewRegistry()
//	if err := builtin.Register(reg); err != nil { ... }
//	ps, err := reg.Build([]plugins.Config{{Name: "limits", Config: json.RawMessage(`{"max_turns": 20}`)}})
//
// # Concurrency
//
// Register is as safe as Registry.Register: it may be called concurrently
// with other registrations.
//
// # Testing
//
// The tests build every built-in through a Registry and run them in one
// Chain, checking the priorities that order them.
package builtin
