package llm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestTrim(t *testing.T) {
	h := []*Message{
		UserMessage("u1"),                 // 0
		asst("a1", "c1", "c2"),            // 1
		result("c1"),                      // 2
		result("c2"),                      // 3
		AssistantMessage("done"),          // 4
		UserMessage("u2"),                 // 5
		asst("a2", "c3"),                  // 6
		result("c3"),                      // 7
		AssistantMessage("[interrupted]"), // 8
	}
	tests := []struct {
		name        string
		maxMessages int
		budget      int64
		want        string
	}{
		{"no limits", 0, 0, brief(h)},
		{"limit above the length", 20, 0, brief(h)},
		{"cut at a user message", 4, 0, brief(h[5:])},
		{"cut on a result moves back to its call", 2, 0, brief(h[6:])},
		{"cut on the second result of a batch", 6, 0, brief(h[1:])},
		{"one message", 1, 0, brief(h[8:])},
		// Each message is 1 to 5 tokens: "[interrupted]" is 13 bytes, 4 tokens.
		{"budget of the newest message only", 0, 4, brief(h[8:])},
		{"budget below the newest message keeps it", 0, 1, brief(h[8:])},
		{"budget cutting a result", 0, 4 + 2, brief(h[6:])},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := brief(Trim(h, tt.maxMessages, tt.budget)); got != tt.want {
				t.Fatalf("Trim(%d, %d) = %s, want %s", tt.maxMessages, tt.budget, got, tt.want)
			}
		})
	}
	if got := Trim(nil, 3, 10); len(got) != 0 {
		t.Fatalf("Trim(nil) = %v", got)
	}
}

// TestTrimProperty trims random valid histories — tool batches, text
// interrupted mid-stream, calls answered as interrupted — with random
// limits: every result is valid for the provider, a suffix of the history
// holding its newest message, and within the limits unless the cut had to
// move back to keep a call with its results.
func TestTrimProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 15))
	for i := range 2000 {
		h := validHistory(rng)
		n, budget := rng.IntN(12), int64(rng.IntN(60))
		got := Trim(h, n, budget)
		if err := Validate(got); err != nil {
			t.Fatalf("case %d: Trim(%s, %d, %d) = %s: %v", i, brief(h), n, budget, brief(got), err)
		}
		if len(got) == 0 || got[len(got)-1] != h[len(h)-1] || &got[0] != &h[len(h)-len(got)] {
			t.Fatalf("case %d: Trim(%s) = %s is not a suffix with the newest message", i, brief(h), brief(got))
		}
		movedBack := got[0].GetRole() == RoleAssistant && len(got) > 1 && got[1].GetRole() == RoleTool
		var tokens int64
		for _, m := range got {
			tokens += EstimateMessageTokens(m)
		}
		if !movedBack && len(got) > 1 && ((n > 0 && len(got) > n) || (budget > 0 && tokens > budget)) {
			t.Fatalf("case %d: Trim(%s, %d, %d) = %s (%d tokens) exceeds the limits", i, brief(h), n, budget, brief(got), tokens)
		}
		// The cut is the latest one the limits allow: one message more
		// would break them (or the history is whole).
		if len(got) < len(h) && got[0].GetRole() != RoleTool {
			longer := h[len(h)-len(got)-1:]
			var more int64
			for _, m := range longer {
				more += EstimateMessageTokens(m)
			}
			if longer[0].GetRole() != RoleTool && !movedBack && (n == 0 || len(longer) <= n) && (budget == 0 || more <= budget) {
				t.Fatalf("case %d: Trim(%s, %d, %d) = %s cut more than needed", i, brief(h), n, budget, brief(got))
			}
		}
	}
}

// validHistory is a valid history of random turns.
func validHistory(rng *rand.Rand) []*Message {
	var h []*Message
	calls := 0
	for range 1 + rng.IntN(8) {
		h = append(h, UserMessage(strings.Repeat("u", 1+rng.IntN(30))))
		for range rng.IntN(4) {
			switch rng.IntN(3) {
			case 0: // a tool batch
				k := 1 + rng.IntN(3)
				var ids []string
				for range k {
					calls++
					ids = append(ids, fmt.Sprintf("c%d", calls))
				}
				h = append(h, asst(strings.Repeat("a", rng.IntN(20)), ids...))
				for _, id := range ids {
					h = append(h, ToolResultMessage(id, strings.Repeat("r", rng.IntN(40)), rng.IntN(4) == 0))
				}
			case 1: // interrupted text
				h = append(h, AssistantMessage(strings.Repeat("a", rng.IntN(20))+"\n\n[interrupted]"))
			default:
				h = append(h, AssistantMessage(strings.Repeat("a", 1+rng.IntN(20))))
			}
		}
	}
	return h
}

func TestContextConfigValidate(t *testing.T) {
	neg := -1
	tests := []struct {
		name string
		c    ContextConfig
		want string
	}{
		{"zero", ContextConfig{}, ""},
		{"all set", ContextConfig{MaxMessages: 40, MaxTokens: 4000, MaxPercent: 50, CompactAtPercent: 80, KeepRecent: new(0), CompactModel: "m"}, ""},
		{"max_messages", ContextConfig{MaxMessages: -1}, "context.max_messages must not be negative, not -1"},
		{"max_tokens", ContextConfig{MaxTokens: -5}, "context.max_tokens must not be negative, not -5"},
		{"max_percent", ContextConfig{MaxPercent: 101}, "context.max_percent must be from 0 to 100, not 101"},
		{"max_percent NaN", ContextConfig{MaxPercent: math.NaN()}, "context.max_percent must be from 0 to 100, not NaN"},
		{"compact_at_percent", ContextConfig{CompactAtPercent: -2}, "context.compact_at_percent must be from 0 to 100, not -2"},
		{"keep_recent", ContextConfig{KeepRecent: &neg}, "context.keep_recent must not be negative, not -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Validate = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestContextConfigBudget(t *testing.T) {
	tests := []struct {
		c      *ContextConfig
		window int64
		want   int64
	}{
		{nil, 8000, 0},
		{&ContextConfig{}, 8000, 0},
		{&ContextConfig{MaxTokens: 3000}, 0, 3000},
		{&ContextConfig{MaxPercent: 50}, 8000, 4000},
		{&ContextConfig{MaxPercent: 50}, 0, 0},
		{&ContextConfig{MaxTokens: 3000, MaxPercent: 50}, 8000, 3000},
		{&ContextConfig{MaxTokens: 5000, MaxPercent: 50}, 8000, 4000},
	}
	for _, tt := range tests {
		if got := tt.c.Budget(tt.window); got != tt.want {
			t.Errorf("%+v.Budget(%d) = %d, want %d", tt.c, tt.window, got, tt.want)
		}
	}
	if (&ContextConfig{}).Keep() != DefaultKeepRecent || (&ContextConfig{KeepRecent: new(3)}).Keep() != 3 {
		t.Fatal("Keep")
	}
}
