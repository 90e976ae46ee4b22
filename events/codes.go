package events

// Error codes of command replies (docs/protocol.md, "Error codes").
const (
	CodeBadRequest        = "bad_request"
	CodeUnknownCommand    = "unknown_command"
	CodeInvalidSession    = "invalid_session"
	CodeNotAlive          = "not_alive"
	CodeQueueFull         = "queue_full"
	CodeRejected          = "rejected"
	CodeNoPendingApproval = "no_pending_approval"
	CodeNoPendingQuestion = "no_pending_question"
	CodeUnknownModel      = "unknown_model"
	CodeUnknownTool       = "unknown_tool"
	CodeInternal          = "internal"
	CodeStoreFailed       = "store_failed"
	CodeBusy              = "busy"
	CodeUnauthorized      = "unauthorized"
	CodeForbidden         = "forbidden"    // the caller may not do this (docs/security.md)
	CodeRateLimited       = "rate_limited" // a per-user limit was reached (docs/security.md)
)
