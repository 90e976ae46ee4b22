package actors

import (
	"math"
	"testing"

	"github.com/tack-run/tack/llm"
)

// TestTallySaturates: counts that would pass the largest int64 stop
// there instead of wrapping around to a negative total, which a budget
// (the limits plugin's max_session_tokens) would never reach.
func TestTallySaturates(t *testing.T) {
	var s tally
	s.add(&llm.Usage{InputTokens: 10, OutputTokens: 5, CachedInputTokens: 2, ReasoningTokens: 1}, llm.Cost{})
	if s.input != 10 || s.output != 5 || s.cached != 2 || s.reasoning != 1 || s.total() != 15 {
		t.Fatalf("tally %+v, total %d", s, s.total())
	}
	s.add(&llm.Usage{InputTokens: math.MaxInt64, OutputTokens: math.MaxInt64 - 1}, llm.Cost{})
	if s.input != math.MaxInt64 || s.output != math.MaxInt64 || s.total() != math.MaxInt64 {
		t.Fatalf("past the largest count: %+v, total %d", s, s.total())
	}
	s.merge(tally{input: 1, output: 1})
	if s.total() != math.MaxInt64 {
		t.Fatalf("after a merge: total %d", s.total())
	}
}
