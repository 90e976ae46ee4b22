package script

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/tack-run/tack/llm"
)

// Provider plays a Script as an llm.Provider: each Stream call takes the
// next turn. Make one per session with New, so the position is per session.
// It is llm.Stateful: the position is stored with the session.
type Provider struct {
	script *Script

	mu   sync.Mutex
	next int // index of the next turn
	// ahead is how far the session's call ids run ahead of its count of
	// calls (aheadOf).
	ahead int
}

// New returns a Provider at the first turn of s. s should be valid (see
// Script.Validate); Provider reads it and never modifies it.
func New(s *Script) *Provider {
	return &Provider{script: s}
}

// Stream plays the next turn for req: it emits the turn's chunks on the
// calling goroutine at the scripted times and returns the assistant
// message, or the turn's *llm.Error. When ctx is cancelled it returns
// ctx.Err() at once, from any wait. A request made with ctx already done
// does not take a turn.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req == nil {
		req = &llm.Request{}
	}
	t, err := p.take(req)
	if err != nil {
		return nil, err
	}
	if t.Report {
		r := *t
		r.Text += report(req)
		t = &r
	}
	base := req.CallsBefore
	for _, m := range req.Messages {
		base += len(m.GetToolCalls())
	}
	return play(ctx, t, req, base+p.aheadOf(req.Messages, base), emit)
}

// aheadOf is how far the session's call ids run ahead of its count of
// calls, the most that any of its requests has shown: in msgs, whose
// session has count calls, the newest id c-N less the number of calls up
// to it. It is 0 for a history that scripts numbered throughout. A fork
// holds its source's ids but not the calls its source had compacted, and
// an imported history may hold any ids: there the count alone would give
// an id the history holds. Kept in the stored state, it outlives those
// ids leaving the requests (compacted or trimmed in their turn).
func (p *Provider) aheadOf(msgs []*llm.Message, count int) int {
	n := idAhead(msgs, count)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ahead = max(p.ahead, n)
	return p.ahead
}

// idAhead is N of the newest call id c-N of msgs less the number of the
// session's calls up to it (count, less the calls after it), 0 when none
// is ahead.
func idAhead(msgs []*llm.Message, count int) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		calls := msgs[i].GetToolCalls()
		for j := len(calls) - 1; j >= 0; j-- {
			digits, ok := strings.CutPrefix(calls[j].GetId(), "c-")
			if n, err := strconv.Atoi(digits); ok && err == nil {
				return max(n-count, 0)
			}
			count--
		}
	}
	return 0
}

// take returns the turn for req and moves on.
func (p *Provider) take(req *llm.Request) (*Turn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	turns := p.script.Turns
	if p.next < len(turns) {
		p.next++
		return &turns[p.next-1], nil
	}
	switch p.script.WhenExhausted {
	case Echo:
		return &Turn{Text: lastUserText(req.Messages)}, nil
	case Fail:
	default: // RepeatLast
		if len(turns) > 0 {
			return &turns[len(turns)-1], nil
		}
	}
	return nil, &llm.Error{Status: 400, Message: "script exhausted"}
}

// report is what a Report turn appends: the request's message count and
// images, as JSON.
func report(req *llm.Request) string {
	type image struct {
		URL    string `json:"url"`
		Detail string `json:"detail,omitempty"`
	}
	r := struct {
		MessageCount int     `json:"message_count"`
		Images       []image `json:"images"`
	}{MessageCount: len(req.Messages), Images: []image{}}
	for _, m := range req.Messages {
		for _, img := range m.GetImages() {
			r.Images = append(r.Images, image{URL: img.GetUrl(), Detail: img.GetDetail()})
		}
	}
	b, _ := json.Marshal(r) // strings and a number: cannot fail
	return string(b)
}

// lastUserText returns the content of the last user message, "" if none.
func lastUserText(msgs []*llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].GetRole() == llm.RoleUser {
			return msgs[i].GetContent()
		}
	}
	return ""
}

// position is the Provider's stored state (llm.Stateful).
type position struct {
	// Next is the index of the next turn.
	Next int `json:"next"`
	// Ahead is how far the session's call ids run ahead of its count of
	// calls (aheadOf); absent when they do not.
	Ahead int `json:"ahead,omitempty"`
}

// SaveState returns the position in the script, so a restored session
// goes on at the turn it had reached.
func (p *Provider) SaveState() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, _ := json.Marshal(position{Next: p.next, Ahead: p.ahead}) // cannot fail
	return b
}

// LoadState moves to a position SaveState returned. A position past the
// end of the script is the end: what follows is WhenExhausted.
func (p *Provider) LoadState(state []byte) error {
	var pos position
	if err := json.Unmarshal(state, &pos); err != nil {
		return fmt.Errorf("script: stored position: %w", err)
	}
	if pos.Next < 0 {
		return fmt.Errorf("script: stored position %d is negative", pos.Next)
	}
	if pos.Ahead < 0 {
		return fmt.Errorf("script: stored call id offset %d is negative", pos.Ahead)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next, p.ahead = min(pos.Next, len(p.script.Turns)), pos.Ahead
	return nil
}
