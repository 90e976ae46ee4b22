package tack

import (
	"fmt"
	"strconv"

	"github.com/tack-run/tack/events"
)

// MaxIDLength is the longest session id a caller may choose.
const MaxIDLength = 128

// IDRule says which session ids a caller may choose; CheckID's errors
// quote it.
const IDRule = `1–128 characters of A–Z a–z 0–9 . _ : @ -, not "." or ".." (ids with "/" are the runtime's own: a sub-agent is <parent>/sub-N)`

// CheckID reports whether a caller may name a new session id (a
// create_session's session, a fork's new_session): nil, or a bad_request
// that quotes IDRule. The runtime's own ids — generated ones, and a
// sub-agent's <parent>/sub-N — are not chosen by callers; no caller can
// take one of them first.
func CheckID(id string) error { return checkID("session", id) }

// checkID is CheckID with the field the id came in.
func checkID(field, id string) error {
	if ok := validID(id); !ok {
		return &Error{Code: events.CodeBadRequest, Message: fmt.Sprintf("%s %s is not a valid id: an id is %s", field, quoteID(id), IDRule)}
	}
	return nil
}

// validID reports whether id follows IDRule.
func validID(id string) bool {
	if len(id) == 0 || len(id) > MaxIDLength || id == "." || id == ".." {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.', c == '_', c == ':', c == '@', c == '-':
		default:
			return false
		}
	}
	return true
}

// quoteID quotes id for an error message: escaped (no newline or bidi
// mark reaches a log or a terminal as such) and cut to its first 40 bytes.
func quoteID(id string) string {
	const show = 40
	if len(id) <= show {
		return strconv.QuoteToASCII(id)
	}
	return strconv.QuoteToASCII(id[:show]) + fmt.Sprintf("... (%d bytes)", len(id))
}
