package tools

// Fixed result texts of docs/protocol.md, so that a model and a test can
// recognise them. The runtime commits them as error results.
const (
	// InterruptedByAbort is the result of a tool cancelled by abort.
	InterruptedByAbort = "interrupted: aborted by user"
	// SkippedForSteering is the result of a tool cancelled by a steering message.
	SkippedForSteering = "skipped: a steering message arrived"
	// InterruptedByRestart is the result of a call whose process died
	// while it ran (issue 6's agent_recovered).
	InterruptedByRestart = "interrupted: process restarted"
	// RejectedPrefix starts the result of a call whose approval was
	// rejected; the reason follows it ("rejected: superseded").
	RejectedPrefix = "rejected: "
)

// Result is the outcome of one tool call as it is committed to the history.
type Result struct {
	// Content is the tool's output, or the error text when IsError.
	Content string
	// IsError marks a failed call (an error, a panic, a cancellation).
	IsError bool
}
