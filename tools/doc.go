// Package tools defines what a model can call: the [Tool] interface, the
// immutable [Set] of tools a session offers (schemas compiled once),
// argument validation, and [Execute], which turns a call into a [Result]
// that can be committed to the history. The demo, shell and file tools
// live in tools/builtin.
//
// # Usage
//
// The runtime builds one [Catalog] of every tool it knows and resolves the
// names given to create_session into a Set, shared by all sessions that
// asked for the same tools:
//
//	cat, err := tools.NewCatalog(builtin.Demo()...)
//	set, err := cat.Resolve([]string{"sleep", "shell"})
//	specs := set.Specs() // what the model request lists, sorted by name
//
// For each call the model makes:
//
//	spec, ok := set.Spec(call.Name)        // !ok: tool_call_unknown
//	if err := set.Validate(call.Name, call.Args); err != nil {
//		// commit Result{Content: err.Error(), IsError: true}
//	}
//	t, _ := set.Get(call.Name)
//	go func() { done <- tools.Execute(ctx, t, call.Args, update) }()
//
// spec.Kind says whether the call is [Immune] to abort and steering. When
// the runtime cancels a call it commits [InterruptedByAbort] or
// [SkippedForSteering] rather than whatever the tool returned; a rejected
// approval is committed as [RejectedPrefix] + reason.
//
// # Concurrency
//
// Set and Catalog are safe for concurrent use; a Set never changes after it
// is built ([Set.With] returns a new one). [Execute] runs the tool on the
// calling goroutine and returns only when Run does, which a tool that
// ignores cancellation may never do promptly: call it from a goroutine of
// your own and abandon that goroutine if you stop waiting. A tool's update
// function may be called from any goroutine until Run returns.
//
// # Testing
//
// [Define] builds a Tool from a Spec and a function, which is all a test
// needs for a fake tool. [Execute] catches panics, so a test tool may panic
// to exercise that path.
package tools
