// Package plugins is Tack's hook chain: plugins are asked at fixed points
// of a session's flow (the Hook constants) and answer with actions
// (Action) that continue, change or stop the step — block a tool, hold it
// for a person's approval, inject an intervention, abort the run, emit a
// plugin_event, and so on. Allowed says which hook may answer with which
// action. Each built-in plugin lives in a package of its own under
// plugins/; nothing below the CLI imports one.
//
// # Usage
//
// A program registers factories by name and the runtime builds one
// instance per session from create_session's configuration:
//
//	reg := plugins.NewRegistry()
//	reg.Register("approval", approval.New)
//	ps, err := reg.Build([]plugins.Config{{Name: "approval", Config: cfg}})
//	chain := plugins.NewChain(0, ps...)
//	out := chain.Run(&plugins.Event{Hook: plugins.BeforeTool, Call: call})
//
// The session actor turns an Outcome into events and state changes; see
// docs/plugins.md for what each action does at each hook.
//
// # Concurrency
//
// A Chain belongs to one session and is used from its actor only. Each
// Handle runs on a goroutine of its own and is waited for at most the
// budget (DefaultBudget): a plugin that panics or overruns is disabled for
// that session, reported in Outcome.Failures, and the session carries on.
// Plugins must not block: one that needs to wait for a person answers with
// hold_for_approval or ask, and the runtime resumes when the answer comes.
//
// # Testing
//
// Chains are plain values: tests build one from plugin instances and call
// Run with Events, with no session or actor needed.
package plugins
