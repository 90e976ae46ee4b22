package tack

import (
	"errors"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Error is a command that failed: Code is one of the error codes of docs/protocol.md
// (the events.Code* constants), Message says why.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Code returns the protocol error code of err: its *Error's code, or
// "internal" for any other error.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return "internal"
}

func errorFrom(info *eventsv1.ErrorInfo) error {
	if info == nil {
		return nil
	}
	return &Error{Code: info.Code, Message: info.Message}
}
