package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/llm"
)

// randomScript returns a script of one to five random turns and a last
// plain answer, which repeats: every run ends.
func randomScript(rng *rand.Rand) string {
	var turns []string
	for range 1 + rng.IntN(5) {
		turns = append(turns, randomTurn(rng))
	}
	turns = append(turns, `{"text":"done","chunk_size":2,"chunk_delay_ms":1}`)
	return `{"turns":[` + strings.Join(turns, ",") + `]}`
}

func randomTurn(rng *rand.Rand) string {
	t := map[string]any{}
	if rng.IntN(3) == 0 {
		t["delay_ms"] = rng.IntN(10)
	}
	text := func() {
		t["text"] = strings.Repeat("word ", 1+rng.IntN(6))
		t["chunk_size"] = 1 + rng.IntN(8)
		t["chunk_delay_ms"] = rng.IntN(3)
	}
	switch rng.IntN(7) {
	case 0:
		text()
	case 1:
		t["thinking"] = "let me think"
		text()
	case 2, 3, 4:
		if rng.IntN(2) == 0 {
			text()
		}
		var calls []map[string]any
		for range 1 + rng.IntN(3) {
			calls = append(calls, randomCall(rng))
		}
		t["tool_calls"] = calls
	case 5:
		t["error"] = map[string]any{"status": 500, "message": "boom"}
	case 6:
		text()
		t["error"] = map[string]any{"status": 503, "message": "overloaded"}
	}
	b, err := json.Marshal(t)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func randomCall(rng *rand.Rand) map[string]any {
	ms := rng.IntN(21)
	switch rng.IntN(10) {
	case 0, 1:
		return map[string]any{"name": "echo", "args": map[string]any{"text": "echoed"}}
	case 2, 3:
		return map[string]any{"name": "sleep", "args": map[string]any{"ms": ms}}
	case 4, 5:
		return map[string]any{"name": "sleep_immune", "args": map[string]any{"ms": ms}}
	case 6, 7:
		return map[string]any{"name": "sleep_stubborn", "args": map[string]any{"ms": ms}}
	case 8:
		return map[string]any{"name": "teleport"}
	default:
		return map[string]any{"name": "sleep", "args": map[string]any{"ms": "soon"}}
	}
}

// model is a random script named name whose requests p checks, with the
// seed's window, refusing as an overflow what passes p.refuse.
func (p *prop) model(name string) *llm.Model {
	script := randomScript(p.rng)
	if p.window > 0 {
		script = fmt.Sprintf(`{"context_window":%d,`, p.window) + script[1:]
	}
	m := scriptModel(p.t, name, script)
	if p.refuse > 0 {
		m.Provider = windowOf(p.refuse)(m.Provider)
	}
	m.Provider = &checkedProvider{Provider: m.Provider, sent: p.sent}
	return m
}

// sentRequests are the requests a session's models were sent, in order.
type sentRequests struct {
	mu   sync.Mutex
	reqs []*llm.Request
}

// checkedProvider records each request before its provider streams it.
type checkedProvider struct {
	llm.Provider
	sent *sentRequests
}

func (c *checkedProvider) Stream(ctx context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
	c.sent.mu.Lock()
	c.sent.reqs = append(c.sent.reqs, req)
	c.sent.mu.Unlock()
	return c.Provider.Stream(ctx, req, emit)
}

// checkRequests checks every request sent so far against the history
// invariant, the system prompt, the limits and request_start.
func (p *prop) checkRequests(evs []*eventsv1.Event) {
	p.t.Helper()
	starts := findAll(evs, "request_start")
	// A run aborted just after request_start ends without waiting for its
	// stream goroutine, which may not have called the provider yet: it
	// will, with a cancelled context. Summary requests have no
	// request_start; their compactions are over (compacted).
	reqs := eventually.Value(p.t, 5*time.Second, func() ([]*llm.Request, error) {
		p.sent.mu.Lock()
		reqs := slices.Clone(p.sent.reqs)
		p.sent.mu.Unlock()
		reqs = slices.DeleteFunc(reqs, func(r *llm.Request) bool {
			if r.System != SummarisePrompt {
				return false
			}
			if len(r.Messages) != 1 || r.Messages[0].Role != llm.RoleUser || r.Messages[0].Content == "" {
				p.t.Errorf("a summary request with messages %q", contents(r.Messages))
			}
			return true
		})
		if len(reqs) < len(starts) {
			return nil, fmt.Errorf("%d request_start events for %d requests", len(starts), len(reqs))
		}
		return reqs, nil
	})
	if len(starts) != len(reqs) {
		p.t.Fatalf("%d request_start events for %d requests", len(starts), len(reqs))
	}
	// request_start tells how many messages each request carries. A
	// request whose run was aborted at once may reach the provider after
	// the next one, so the counts are compared as multisets.
	told, sent := make([]int, len(starts)), make([]int, len(reqs))
	for i := range starts {
		told[i], sent[i] = int(starts[i].GetRequestStart().MessageCount), len(reqs[i].Messages)
	}
	slices.Sort(told)
	slices.Sort(sent)
	if !slices.Equal(told, sent) {
		p.t.Errorf("request_start message counts %v, requests sent with %v messages", told, sent)
	}
	for i, req := range reqs {
		if err := llm.Validate(req.Messages); err != nil {
			p.t.Errorf("request %d is not valid: %v", i+1, err)
		}
		if req.System != "be brief" || len(req.Messages) == 0 {
			p.t.Errorf("request %d: system %q, %d messages", i+1, req.System, len(req.Messages))
		}
		if p.limits == nil {
			continue
		}
		movedBack := len(req.Messages) > 1 && req.Messages[1].Role == llm.RoleTool
		var tokens int64
		for _, m := range req.Messages {
			tokens += llm.EstimateMessageTokens(m)
		}
		budget := p.limits.MaxTokens // the script reports no usage: no scaling
		if budget > 0 {
			budget = max(budget-llm.EstimateTokens("be brief"), 1)
		}
		if !movedBack && len(req.Messages) > 1 &&
			((p.limits.MaxMessages > 0 && len(req.Messages) > p.limits.MaxMessages) || (budget > 0 && tokens > budget)) {
			p.t.Errorf("request %d: %d messages, %d tokens over the limits %+v", i+1, len(req.Messages), tokens, p.limits)
		}
	}
}
