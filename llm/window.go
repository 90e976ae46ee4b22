package llm

import (
	"fmt"
	"math"
)

// DefaultKeepRecent is how many of the newest messages compaction keeps
// when ContextConfig.KeepRecent is nil.
const DefaultKeepRecent = 10

// ContextConfig bounds what a session's requests carry and says when its
// history is compacted (the `context` option of create_session). The zero
// value sets no limit and never compacts on its own; zero fields are
// absent.
type ContextConfig struct {
	// MaxMessages is the most messages of history a request carries; 0: no
	// limit.
	MaxMessages int `json:"max_messages,omitempty"`
	// MaxTokens is the most tokens a request's system prompt and history
	// may fill, estimated at 4 characters a token and scaled by what the
	// provider reported for the last request; 0: no limit.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// MaxPercent is MaxTokens as a share of the model's context window, in
	// (0, 100]; 0, or an unknown window: no limit. With both, the smaller
	// budget holds.
	MaxPercent float64 `json:"max_percent,omitempty"`
	// CompactAtPercent compacts the history once a response's
	// context_percent reaches it, in (0, 100]; 0: never on its own.
	CompactAtPercent float64 `json:"compact_at_percent,omitempty"`
	// KeepRecent is how many of the newest messages compaction keeps; nil
	// means DefaultKeepRecent.
	KeepRecent *int `json:"keep_recent,omitempty"`
	// CompactModel names the model that writes summaries; "" means the
	// session's own.
	CompactModel string `json:"compact_model,omitempty"`
}

// Validate reports the first field out of range, named as on the wire
// ("context.max_messages must not be negative, not -1").
func (c *ContextConfig) Validate() error {
	switch {
	case c.MaxMessages < 0:
		return fmt.Errorf("context.max_messages must not be negative, not %d", c.MaxMessages)
	case c.MaxTokens < 0:
		return fmt.Errorf("context.max_tokens must not be negative, not %d", c.MaxTokens)
	case !percent(c.MaxPercent):
		return fmt.Errorf("context.max_percent must be from 0 to 100, not %v", c.MaxPercent)
	case !percent(c.CompactAtPercent):
		return fmt.Errorf("context.compact_at_percent must be from 0 to 100, not %v", c.CompactAtPercent)
	case c.KeepRecent != nil && *c.KeepRecent < 0:
		return fmt.Errorf("context.keep_recent must not be negative, not %d", *c.KeepRecent)
	}
	return nil
}

// Keep is how many of the newest messages compaction keeps.
func (c *ContextConfig) Keep() int {
	if c == nil || c.KeepRecent == nil {
		return DefaultKeepRecent
	}
	return *c.KeepRecent
}

// Budget is the token budget of a request for a model with window tokens
// (0: unknown): the smaller of MaxTokens and MaxPercent of the window, 0
// when neither applies.
func (c *ContextConfig) Budget(window int64) int64 {
	if c == nil {
		return 0
	}
	b := c.MaxTokens
	if c.MaxPercent > 0 && window > 0 {
		p := int64(float64(window) * c.MaxPercent / 100)
		if b == 0 || p < b {
			b = max(p, 1)
		}
	}
	return b
}

// percent reports whether p is a share in [0, 100].
func percent(p float64) bool {
	return !math.IsNaN(p) && p >= 0 && p <= 100
}

// Trim returns the newest part of a valid history that a request may
// carry: at most maxMessages messages (0: no limit) whose estimated tokens
// (EstimateMessageTokens) add up to at most budget (0: no limit). The cut
// never separates a tool result from the assistant message that called
// it: when the oldest message kept is a tool result, the cut moves back to
// its assistant message, even past the limits. The newest message is kept
// whatever the limits, with its assistant message if it is a result.
// msgs is not modified; the result shares its tail.
func Trim(msgs []*Message, maxMessages int, budget int64) []*Message {
	start := 0
	if maxMessages > 0 && len(msgs) > maxMessages {
		start = len(msgs) - maxMessages
	}
	if budget > 0 {
		var used int64
		i := len(msgs) - 1
		for ; i >= start; i-- {
			used += EstimateMessageTokens(msgs[i])
			if used > budget {
				break
			}
		}
		start = max(start, min(i+1, len(msgs)-1))
	}
	for start > 0 && start < len(msgs) && msgs[start].GetRole() == RoleTool {
		start--
	}
	return msgs[start:]
}

// EstimateMessageTokens estimates m at 4 characters a token: its content,
// thinking and tool call arguments, and its images as ImageTokens each
// (LowDetailImageTokens at detail low).
func EstimateMessageTokens(m *Message) int64 {
	return tokens(messageChars(m))
}
