// Package httperror writes the error responses of Tack's HTTP surfaces —
// the REST routes and AG-UI — in one form: a JSON body
// {"error":{"code","message"}} with the status docs/http.md gives each
// protocol code.
package httperror

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
)

// statusOf is the HTTP status of each protocol error code.
var statusOf = map[string]int{
	events.CodeBadRequest:        http.StatusBadRequest,
	events.CodeUnauthorized:      http.StatusUnauthorized,
	events.CodeRejected:          http.StatusForbidden,
	events.CodeForbidden:         http.StatusForbidden,
	events.CodeRateLimited:       http.StatusTooManyRequests,
	events.CodeInvalidSession:    http.StatusNotFound,
	events.CodeUnknownCommand:    http.StatusNotFound,
	events.CodeQueueFull:         http.StatusTooManyRequests,
	events.CodeNotAlive:          http.StatusConflict,
	events.CodeNoPendingApproval: http.StatusConflict,
	events.CodeNoPendingQuestion: http.StatusConflict,
	events.CodeBusy:              http.StatusConflict,
	events.CodeUnknownModel:      http.StatusUnprocessableEntity,
	events.CodeUnknownTool:       http.StatusUnprocessableEntity,
	events.CodeInternal:          http.StatusInternalServerError,
	events.CodeStoreFailed:       http.StatusServiceUnavailable,
}

// Status returns the HTTP status of a protocol error code; 500 for a code
// it does not know.
func Status(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Write answers with err: a *tack.Error's code with its status (or the
// status a *StatusError carries), anything else as internal.
func Write(w http.ResponseWriter, err error) {
	var e *tack.Error
	if !errors.As(err, &e) {
		e = &tack.Error{Code: events.CodeInternal, Message: err.Error()}
	}
	status := Status(e.Code)
	var se *StatusError
	if errors.As(err, &se) {
		status = se.Status
	}
	WriteStatus(w, status, e.Code, e.Message)
}

// WriteStatus answers with an error body of code and message, with status.
// A rate_limited answer always carries Retry-After: the one the caller
// set, else 1 (a run or session must end first, which takes no known
// time).
func WriteStatus(w http.ResponseWriter, status int, code, message string) {
	b, _ := json.Marshal(body{Error: info{Code: code, Message: message}})
	if code == events.CodeRateLimited && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// StatusError gives an error a status its code alone would not, such as
// 413 for a body over the limit (code bad_request).
type StatusError struct {
	Status int
	Err    error
}

func (e *StatusError) Error() string { return e.Err.Error() }
func (e *StatusError) Unwrap() error { return e.Err }

type body struct {
	Error info `json:"error"`
}

type info struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
