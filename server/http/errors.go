package http

import (
	"net/http"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/internal/httperror"
)

// writeError answers with err: a *tack.Error's code and the status for
// it, anything else as internal.
func writeError(w http.ResponseWriter, err error) { httperror.Write(w, err) }

// writeErrorStatus answers with an error body of code and message, with
// status.
func writeErrorStatus(w http.ResponseWriter, status int, code, message string) {
	httperror.WriteStatus(w, status, code, message)
}

// protoError is a *tack.Error with code and message.
func protoError(code, message string) error { return &tack.Error{Code: code, Message: message} }
