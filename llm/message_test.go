package llm

import (
	"testing"

	"google.golang.org/protobuf/proto"
)

func TestConstructors(t *testing.T) {
	tests := []struct {
		name string
		got  *Message
		want *Message
	}{
		{"user", UserMessage("hi"), &Message{Role: "user", Content: "hi"}},
		{"assistant", AssistantMessage("hello"), &Message{Role: "assistant", Content: "hello"}},
		{"tool result", ToolResultMessage("c-1", "done", false), &Message{Role: "tool", ToolCallId: "c-1", Content: "done"}},
		{"tool error", ToolResultMessage("c-2", "boom", true), &Message{Role: "tool", ToolCallId: "c-2", Content: "boom", IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !proto.Equal(tt.got, tt.want) {
				t.Fatalf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want int64
	}{
		{"empty", "", 0},
		{"one byte", "a", 1},
		{"four bytes", "abcd", 1},
		{"five bytes", "abcde", 2},
		{"eight bytes", "abcdefgh", 2},
		{"multibyte runes count bytes", "héllo", 2}, // 6 bytes
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateTokens(tt.s); got != tt.want {
				t.Fatalf("EstimateTokens(%q) = %d, want %d", tt.s, got, tt.want)
			}
		})
	}
}
