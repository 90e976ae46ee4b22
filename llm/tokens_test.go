package llm

import "testing"

func TestOverflowed(t *testing.T) {
	tests := []struct {
		name   string
		usage  *Usage
		window int64
		want   bool
	}{
		{"nil usage", nil, 8000, false},
		{"unknown window", &Usage{InputTokens: 9000}, 0, false},
		{"fits", &Usage{InputTokens: 6000, OutputTokens: 1000}, 8000, false},
		{"exactly full", &Usage{InputTokens: 7000, OutputTokens: 1000}, 8000, false},
		{"prompt fills the window", &Usage{InputTokens: 8000}, 8000, true},
		{"prompt and output exceed", &Usage{InputTokens: 7500, OutputTokens: 501}, 8000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Overflowed(tt.usage, tt.window); got != tt.want {
				t.Fatalf("Overflowed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEstimateUsage(t *testing.T) {
	req := &Request{System: "1234", Messages: []*Message{UserMessage("12345678"), AssistantMessage("1")}}
	got := EstimateUsage(req, AssistantMessage("12345"))
	if got.InputTokens != 4 || got.OutputTokens != 2 || got.TotalTokens != 6 {
		t.Fatalf("EstimateUsage = %v, want 4 in (13 bytes), 2 out (5 bytes)", got)
	}
}
