package openai

import (
	"errors"
	"fmt"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/tack-run/tack/llm"
)

// failure is why one attempt failed, and whether it may be retried.
type failure struct {
	err *llm.Error
	// retryable marks passing trouble (see classify) and connection
	// failures.
	retryable bool
	// stalled marks an attempt cancelled for silence (see WithStall).
	stalled bool
	// retryAfter is the wait the server asked for, when hasRetryAfter.
	retryAfter    time.Duration
	hasRetryAfter bool
}

// reasonLimit caps the reason text of a ChunkRetry, in bytes.
const reasonLimit = 200

// reason is the text of the ChunkRetry announcing a retry of f.
func (f *failure) reason() string {
	if f.stalled {
		return f.err.Message
	}
	return truncate(f.err.Error(), reasonLimit)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut
// with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// stallFailure is the failure of an attempt that was silent for limit.
func stallFailure(limit time.Duration, started bool) *failure {
	msg := fmt.Sprintf("no data for %v", limit)
	if started {
		msg = fmt.Sprintf("the stream stalled: no data for %v after output began", limit)
	}
	return &failure{err: &llm.Error{Message: msg}, stalled: true}
}

// connectionFailure is a transport failure: retryable, since a request
// that did not get through, or whose answer broke off, can be sent again
// while nothing was output.
func (p *Provider) connectionFailure(err error, midStream bool) *failure {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := fmt.Sprintf("connection to %s failed: %v", p.baseURL, err)
	if midStream {
		msg = "the connection broke mid-response: " + err.Error()
	}
	return &failure{err: &llm.Error{Message: msg}, retryable: true}
}
