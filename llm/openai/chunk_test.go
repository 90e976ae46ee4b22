package openai

import (
	"encoding/json"
	"testing"
)

// TestChunkDecodingIsLenient: the fields servers fill in more than one way
// are read as openai-go read them — a value of another type is taken as
// absent — and a chunk decodes whole.
func TestChunkDecodingIsLenient(t *testing.T) {
	tests := []struct {
		name      string
		chunk     string
		index     int64 // of the first tool call delta
		reasoning string
		usage     bool
	}{
		{name: "index", chunk: `{"choices":[{"delta":{"tool_calls":[{"index":2,"id":"a"}]}}]}`, index: 2},
		{name: "no index", chunk: `{"choices":[{"delta":{"tool_calls":[{"id":"a"}]}}]}`, index: -1},
		{name: "index -1", chunk: `{"choices":[{"delta":{"tool_calls":[{"index":-1}]}}]}`, index: -1},
		{name: "index null", chunk: `{"choices":[{"delta":{"tool_calls":[{"index":null}]}}]}`, index: -1},
		{name: "index a string", chunk: `{"choices":[{"delta":{"tool_calls":[{"index":"0"}]}}]}`, index: -1},
		{name: "reasoning_content", chunk: `{"choices":[{"delta":{"reasoning_content":"r","tool_calls":[{}]}}]}`, index: -1, reasoning: "r"},
		{name: "reasoning when reasoning_content is empty", chunk: `{"choices":[{"delta":{"reasoning_content":"","reasoning":"s","tool_calls":[{}]}}]}`, index: -1, reasoning: "s"},
		{name: "reasoning an object", chunk: `{"choices":[{"delta":{"reasoning":{"text":"x"},"tool_calls":[{}]}}]}`, index: -1},
		{name: "usage", chunk: `{"choices":[{"delta":{"tool_calls":[{}]}}],"usage":{"prompt_tokens":3}}`, index: -1, usage: true},
		{name: "usage null, finish_reason null", chunk: `{"choices":[{"delta":{"tool_calls":[{}]},"finish_reason":null}],"usage":null}`, index: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c chunk
			if err := json.Unmarshal([]byte(tt.chunk), &c); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			d := &c.Choices[0].Delta
			if got := d.ToolCalls[0].index(); got != tt.index {
				t.Errorf("index %d, want %d", got, tt.index)
			}
			if got := reasoning(d); got != tt.reasoning {
				t.Errorf("reasoning %q, want %q", got, tt.reasoning)
			}
			if got := c.Usage != nil; got != tt.usage {
				t.Errorf("usage reported: %v, want %v", got, tt.usage)
			}
		})
	}
}
