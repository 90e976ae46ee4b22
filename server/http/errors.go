package http

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

// errorBody is an error response.
type errorBody struct {
	Error errorInfo `json:"error"`
}

type errorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeError answers with err: a *tack.Error's code and the status for
// it, anything else as internal.
func writeError(w http.ResponseWriter, err error) {
	var e *tack.Error
	if !errors.As(err, &e) {
		e = &tack.Error{Code: events.CodeInternal, Message: err.Error()}
	}
	status, ok := statusOf[e.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	writeErrorStatus(w, status, e.Code, e.Message)
}

// writeErrorStatus answers with an error body of code and message, with
// status.
func writeErrorStatus(w http.ResponseWriter, status int, code, message string) {
	b, _ := json.Marshal(errorBody{Error: errorInfo{Code: code, Message: message}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// protoError is a *tack.Error with code and message.
func protoError(code, message string) error { return &tack.Error{Code: code, Message: message} }
