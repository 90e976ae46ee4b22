package actors

import (
	"math"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
)

// usage is what the session has spent, to read: nothing until it has
// spent something.
func (n *notes) usage() *spent {
	if n.spent == nil {
		return &spentNothing
	}
	return n.spent
}

// spending is what the session has spent, to add to.
func (n *notes) spending() *spent {
	if n.spent == nil {
		n.spent = new(spent)
	}
	return n.spent
}

// spentNothing is what a session that has spent nothing reads; nothing
// writes to it.
var spentNothing spent

// spent is what a session spent: its usage and cost, the sub-agents'
// part of it, and how full its context was at the last request.
type spent struct {
	total tally
	// sub is the part of total the sub-agents spent; subRan is set once
	// a sub-agent ended.
	sub    tally
	subRan bool
	// context is the input tokens of the last request (context_used).
	context int64
	// tokenScale is the provider's reported input tokens of the last
	// request over their 4-characters-a-token estimate; 0 until one
	// reported.
	tokenScale float64
}

// tally adds up usage and cost over responses (a run, a session).
type tally struct {
	input, output, cached, reasoning int64
	cost                             float64
}

// add counts one response's usage at the model's price.
func (t *tally) add(u *llm.Usage, price llm.Cost) {
	t.merge(tally{input: u.InputTokens, output: u.OutputTokens, cached: u.CachedInputTokens,
		reasoning: u.ReasoningTokens, cost: responseCost(u, price)})
}

// merge adds another tally (a sub-agent's run) to t. Counts stop at the
// largest int64 instead of wrapping around to negative totals, which a
// budget (the limits plugin's max_session_tokens) would never reach: a
// provider, or a script, may report any count.
func (t *tally) merge(o tally) {
	t.input = saturated(t.input, o.input)
	t.output = saturated(t.output, o.output)
	t.cached = saturated(t.cached, o.cached)
	t.reasoning = saturated(t.reasoning, o.reasoning)
	t.cost += o.cost
}

// saturated is a+b for counts that are not negative, math.MaxInt64 where
// the sum would wrap around.
func saturated(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// tallyOf is the tally a stored usage total stands for.
func tallyOf(u *eventsv1.Usage) tally {
	return tally{input: u.GetInputTokens(), output: u.GetOutputTokens(), cached: u.GetCachedInputTokens(),
		reasoning: u.GetReasoningTokens(), cost: u.GetCostUsd()}
}

func (t tally) total() int64 { return saturated(t.input, t.output) }

func (t tally) proto() *eventsv1.Usage {
	return &eventsv1.Usage{
		InputTokens:       t.input,
		OutputTokens:      t.output,
		TotalTokens:       t.total(),
		CostUsd:           t.cost,
		CachedInputTokens: t.cached,
		ReasoningTokens:   t.reasoning,
	}
}

// responseCost prices one response: cached input tokens (a part of the
// input) at the cached price, the rest of the input and the output at theirs.
func responseCost(u *llm.Usage, price llm.Cost) float64 {
	fresh := u.InputTokens - u.CachedInputTokens
	return (float64(fresh)*price.Input + float64(u.CachedInputTokens)*price.CachedInput + float64(u.OutputTokens)*price.Output) / 1e6
}
