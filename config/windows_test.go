package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// errorsIs is errors.Is, for table fields.
func errorsIs(err, target error) bool { return errors.Is(err, target) }

// TestWindowTable checks the embedded file: it parses, its keys are lower
// case with at most a trailing "*", and its windows are positive.
func TestWindowTable(t *testing.T) {
	var raw map[string]int64
	if err := json.Unmarshal(windowsJSON, &raw); err != nil {
		t.Fatalf("windows.json: %v", err)
	}
	for k, v := range raw {
		if k != strings.ToLower(k) || strings.Contains(strings.TrimSuffix(k, "*"), "*") || v <= 0 {
			t.Errorf("windows.json: bad entry %q: %d", k, v)
		}
	}
}

// TestBuiltinWindow resolves names as OpenAI, Anthropic, Hugging Face,
// Ollama and gateways spell them.
func TestBuiltinWindow(t *testing.T) {
	tests := []struct {
		model string
		want  int64
	}{
		{"gpt-4o", 128000},
		{"gpt-4o-mini-2024-07-18", 128000},
		{"GPT-4o", 128000},
		{"openai/gpt-4o", 128000},
		{"gpt-4", 8192},
		{"gpt-4-turbo-2024-04-09", 128000},
		{"gpt-4.1-mini", 1047576},
		{"gpt-5-mini", 400000},
		{"gpt-5-chat-latest", 128000},
		{"o1", 200000},
		{"o1-mini", 128000},
		{"o3-mini", 200000},
		{"o4-mini-2025-04-16", 200000},
		{"gpt-3.5-turbo-0125", 16385},
		{"gpt-3.5-turbo-instruct", 4096},
		{"claude-sonnet-4-5", 200000},
		{"anthropic/claude-3.5-sonnet", 200000},
		{"meta-llama/Llama-3.1-8B-Instruct", 131072},
		{"Meta-Llama-3.1-70B-Instruct", 131072},
		{"Meta-Llama-3-8B-Instruct", 8192},
		{"llama3.1:8b", 131072},
		{"llama3:8b", 8192},
		{"llama-3.2-3b-instruct", 131072},
		{"llama3.3:70b", 131072},
		{"Qwen/Qwen2.5-7B-Instruct", 32768},
		{"qwen2.5-coder:7b", 32768},
		{"qwen3:8b", 40960},
		{"Qwen/Qwen3-8B", 40960},
		{"qwen3-coder:30b", 262144},
		{"mistral:7b", 32768},
		{"mistralai/Mistral-7B-Instruct-v0.3", 32768},
		{"mistral-large-latest", 131072},
		{"gemma2:9b", 8192},
		{"google/gemma-2-9b-it", 8192},
		{"gemma3:12b", 131072},
		{"gemma3:1b", 32768},
		{"deepseek-chat", 131072},
		{"deepseek-r1:8b", 131072},
		{"deepseek-coder:6.7b", 16384},
		{"deepseek-coder-v2:16b", 131072},
		{"microsoft/Phi-3-mini-4k-instruct", 4096},
		{"microsoft/Phi-3-mini-128k-instruct", 131072},
		{"phi3:mini", 4096},
		{"phi4:14b", 16384},
		{"microsoft/Phi-4-mini-instruct", 131072},
		{"my-finetune", 0},
		{"", 0},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			equal(t, "window", BuiltinWindow(tt.model), tt.want)
		})
	}
}
