package config

import (
	"testing"
)

// multi is a configuration with overlapping model lists.
func multi(t *testing.T) *Config {
	t.Helper()
	c, err := Parse([]byte(`{"providers": {
		"local": {"base_url": "http://127.0.0.1:8000/v1", "context_window": 32000,
			"models": {"qwen3-8b": {"context_window": 40000}, "llama-3.1-8b": {}}},
		"vllm": {"base_url": "http://127.0.0.1:8001/v1",
			"models": ["qwen3-8b", "meta-llama/Llama-3.1-8B-Instruct", "my-finetune"]},
		"openrouter": {"base_url": "https://openrouter.ai/api/v1", "api_key_env": "OPENROUTER_API_KEY"}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLookup resolves names, bare and qualified.
func TestLookup(t *testing.T) {
	single := FromEnv(env{OpenAIKeyEnv: "sk"}.lookup)
	listed, err := Parse([]byte(`{"providers": {"ollama": {"base_url": "http://127.0.0.1:11434/v1", "models": ["qwen3:8b"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		cfg       *Config
		model     string
		provider  string
		id        string
		err       string
		unknownOK bool // err is a "no such model" error
	}{
		{name: "qualified", cfg: multi(t), model: "local/qwen3-8b", provider: "local", id: "qwen3-8b"},
		{name: "qualified unlisted", cfg: multi(t), model: "local/mistral-7b", provider: "local", id: "mistral-7b"},
		{name: "qualified with slashes", cfg: multi(t), model: "openrouter/meta-llama/llama-3.3-70b-instruct", provider: "openrouter", id: "meta-llama/llama-3.3-70b-instruct"},
		{name: "bare, one provider has it", cfg: multi(t), model: "llama-3.1-8b", provider: "local", id: "llama-3.1-8b"},
		{name: "bare with a slash", cfg: multi(t), model: "meta-llama/Llama-3.1-8B-Instruct", provider: "vllm", id: "meta-llama/Llama-3.1-8B-Instruct"},
		{name: "bare, ambiguous", cfg: multi(t), model: "qwen3-8b", err: `model "qwen3-8b" is ambiguous: name one of local/qwen3-8b, vllm/qwen3-8b`},
		{name: "bare, nobody has it", cfg: multi(t), model: "gpt-4o", err: `no such model: no provider has a model "gpt-4o"`, unknownOK: true},
		{name: "unknown provider", cfg: multi(t), model: "nope/qwen3-8b", err: `no such model: no provider has a model "nope/qwen3-8b"`, unknownOK: true},
		{name: "provider without a model", cfg: multi(t), model: "local/", err: `no such model: no provider has a model "local/"`, unknownOK: true},
		{name: "empty", cfg: multi(t), model: "", err: "no such model: no model named", unknownOK: true},
		{name: "bare to the only provider without a list", cfg: single, model: "gpt-4o", provider: "openai", id: "gpt-4o"},
		{name: "bare unlisted at the only provider with a list", cfg: listed, model: "llama3.1:8b", err: `no such model: no provider has a model "llama3.1:8b"`, unknownOK: true},
		{name: "empty configuration", cfg: &Config{}, model: "gpt-4o", err: `no such model: no provider has a model "gpt-4o"`, unknownOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, id, err := tt.cfg.Lookup(tt.model)
			if tt.err != "" {
				if err == nil {
					t.Fatalf("Lookup = %q, %q; want error", p, id)
				}
				equal(t, "error", err.Error(), tt.err)
				equal(t, "no such model", errorsIs(err, errNoSuchModel), tt.unknownOK)
				return
			}
			if err != nil {
				t.Fatalf("Lookup: %v", err)
			}
			equal(t, "provider", p, tt.provider)
			equal(t, "id", id, tt.id)
		})
	}
}

// TestContextWindow checks the precedence: model > provider > built-in
// table > unknown.
func TestContextWindow(t *testing.T) {
	c := multi(t)
	tests := []struct {
		name, provider, model string
		want                  int64
	}{
		{"model's own", "local", "qwen3-8b", 40000},
		{"provider's over the table", "local", "llama-3.1-8b", 32000},
		{"provider's for an unlisted model", "local", "gpt-4o", 32000},
		{"table by last segment", "vllm", "meta-llama/Llama-3.1-8B-Instruct", 131072},
		{"table by pattern", "vllm", "qwen3-8b", 40960},
		{"unknown", "vllm", "my-finetune", 0},
		{"unknown provider falls to the table", "nope", "gpt-4o", 128000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			equal(t, "window", c.ContextWindow(tt.provider, tt.model), tt.want)
		})
	}
}

// TestModelNames lists the listed models.
func TestModelNames(t *testing.T) {
	equal(t, "names", multi(t).ModelNames(), []string{
		"local/llama-3.1-8b", "local/qwen3-8b",
		"vllm/meta-llama/Llama-3.1-8B-Instruct", "vllm/my-finetune", "vllm/qwen3-8b",
	})
}
