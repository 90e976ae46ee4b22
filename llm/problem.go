package llm

import "fmt"

// problemKind is a kind of history violation.
type problemKind uint8

const (
	unknownRole problemKind = iota + 1
	callWithoutID
	duplicateCallID
	missingResult
	orphanResult
	duplicateResult
)

// problem is one violation of the history invariant found by scan.
type problem struct {
	kind problemKind
	// index is the index in the scanned history of the offending message
	// (for missingResult, of the assistant message with the call).
	index  int
	role   string
	callID string
	name   string
}

// String describes the violation.
func (p problem) String() string {
	switch p.kind {
	case unknownRole:
		return fmt.Sprintf("message %d has unknown role %q", p.index, p.role)
	case callWithoutID:
		return fmt.Sprintf("message %d has a tool call (%q) without an id", p.index, p.name)
	case duplicateCallID:
		return fmt.Sprintf("message %d reuses tool call id %q", p.index, p.callID)
	case missingResult:
		return fmt.Sprintf("tool call %q of message %d has no result", p.callID, p.index)
	case orphanResult:
		return fmt.Sprintf("message %d is a tool result for %q, which the assistant message before it did not call", p.index, p.callID)
	case duplicateResult:
		return fmt.Sprintf("message %d is a second tool result for %q", p.index, p.callID)
	}
	return fmt.Sprintf("message %d: unknown problem %d", p.index, p.kind)
}

// fix describes the violation and what Repair did about it.
func (p problem) fix() string {
	var action string
	switch p.kind {
	case unknownRole:
		action = "dropped the message"
	case callWithoutID, duplicateCallID:
		action = "dropped the tool call"
	case missingResult:
		action = "added an error result " + fmt.Sprintf("%q", NoResultText)
	case orphanResult, duplicateResult:
		action = "dropped the result"
	}
	return p.String() + ": " + action
}
