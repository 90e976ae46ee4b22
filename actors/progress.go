package actors

import (
	"fmt"
	"strings"
	"sync"
)

// progress gathers what a running tool call reports (its update calls)
// until the session takes it, so that at most one toolUpdate of a call
// waits in the session's mailbox. A shell running `yes` reported half a
// million lines, one message each, and an abort queued behind them
// waited seconds; now the session relays what came since it last took,
// in one tool_execution_update.
type progress struct {
	mu sync.Mutex
	b  strings.Builder
	// dropped counts the bytes left out since the last take, past
	// maxProgress.
	dropped int
	// posted is set while a toolUpdate for this call is in the mailbox.
	posted bool
}

// maxProgress is the most a call's progress holds between two takes; a
// tool that reports faster than the session relays has the rest, from
// the first report that does not fit, left out until the next take, and
// the count of it told.
const maxProgress = 1 << 20

// add appends p, and reports whether the caller is to post a toolUpdate:
// none is waiting in the mailbox.
func (pr *progress) add(p string) (post bool) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.dropped > 0 || pr.b.Len()+len(p) > maxProgress {
		pr.dropped += len(p)
	} else {
		pr.b.WriteString(p)
	}
	post, pr.posted = !pr.posted, true
	return post
}

// take returns what was reported since the last take, and lets the next
// report post a toolUpdate again.
func (pr *progress) take() string {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	s := pr.b.String()
	if pr.dropped > 0 {
		s += fmt.Sprintf("[%d bytes of progress not relayed]\n", pr.dropped)
	}
	pr.b, pr.dropped, pr.posted = strings.Builder{}, 0, false
	return s
}
