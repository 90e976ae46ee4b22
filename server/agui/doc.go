// Package agui serves a Tack session over AG-UI (https://docs.ag-ui.com),
// so that an unmodified @ag-ui/client HttpAgent runs it: the client POSTs
// a RunAgentInput to `/v1/sessions/{id}/agui` and reads the run's AG-UI
// events as server-sent events.
//
// # Usage
//
//	mux.Handle("POST /v1/sessions/{id}/agui", agui.New(rt))
//
// A server with users sets Handler.Session to find the caller's session
// (another user's session answers invalid_session, as a missing one does).
//
// # Mapping
//
// threadId is the session; the last user message of the input is the
// prompt, and a session that is not idle answers 409 busy. The run starts
// with RUN_STARTED and ends with RUN_FINISHED (or RUN_ERROR when the run
// ends in error). In between, each assistant response becomes
// TEXT_MESSAGE_START / _CONTENT / _END, its thinking the REASONING_*
// events, each tool call TOOL_CALL_START / _ARGS / _END, and each tool
// result, once committed, TOOL_CALL_RESULT. Every other Tack event is a
// CUSTOM event named by its type, with its JSON as the value.
//
// An approval or a question waiting for a person ends the run with
// RUN_FINISHED whose outcome is an interrupt (id = the approval_id or the
// question's ref); the next RunAgentInput answers it in `resume`, which
// becomes approve, reject or respond. A client that closes the request
// mid-run aborts the run (kill_tools killable); what it committed stays.
// docs/agui.md has the full table.
//
// The event types are written here from the AG-UI 1.0 schema
// (@ag-ui/core 1.0.0) rather than taken from the community Go SDK, which
// predates that release (no cancelled outcome) and pulls logrus in.
//
// # Concurrency
//
// Each request has its own subscription and Translator; the handler is
// safe for concurrent use. Translator itself is not: one goroutine feeds
// it.
//
// # Testing
//
// Translator is pure and table-tested on exact event sequences. The
// handler is tested over a real HTTP server with scripted sessions, and
// testdata/client holds a Node test that drives it with the real
// @ag-ui/client (installed from its committed lockfile); the Go test
// TestAGUIClient runs it when Node 20 and npm are present, and always
// under CI=true.
package agui
