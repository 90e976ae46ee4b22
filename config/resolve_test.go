package config

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/llmtest"
	"github.com/tack-run/tack/llm/openai"
	"github.com/tack-run/tack/llm/script"
)

// okStream is a short Chat Completions stream.
const okStream = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-8b","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}

data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"qwen3-8b","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}

data: [DONE]

`

// TestResolveStreams resolves a configured model and streams through its
// Provider: the key from the variable and the model's own name are sent.
func TestResolveStreams(t *testing.T) {
	var auth, model string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string `json:"model"`
		}
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &body)
		auth, model = r.Header.Get("Authorization"), body.Model
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, okStream)
	}))
	defer srv.Close()
	c, err := Parse([]byte(`{"default_model": "local/qwen3-8b", "providers": {"local": {"base_url": "` + srv.URL + `/v1", "api_key_env": "LOCAL_API_KEY", "context_window": 32000,
		"models": {"qwen3-8b": {"context_window": 40000, "cost": {"input": 0.10, "output": 0.20, "cached_input": 0.05}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r := NewResolver(c, openai.WithHTTPClient(srv.Client()))
	r.lookupEnv = env{"LOCAL_API_KEY": "secret"}.lookup
	for _, name := range []string{"local/qwen3-8b", "qwen3-8b", ""} {
		t.Run("name "+name, func(t *testing.T) {
			m, err := r.Resolve(name, nil)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			equal(t, "name", m.Name, "local/qwen3-8b")
			equal(t, "id", m.ID, "qwen3-8b")
			equal(t, "window", m.ContextWindow, int64(40000))
			equal(t, "cost", m.Cost, llm.Cost{Input: 0.10, Output: 0.20, CachedInput: 0.05})
			equal(t, "base URL", m.Provider.(*openai.Provider).BaseURL(), srv.URL+"/v1")
			_, resp, err := llmtest.Collect(t, m.Provider, &llm.Request{Model: m.ID, Messages: []*llm.Message{llm.UserMessage("hi")}})
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			equal(t, "content", resp.Message.GetContent(), "ok")
			equal(t, "authorization", auth, "Bearer secret")
			equal(t, "model sent", model, "qwen3-8b")
		})
	}
}

// TestResolveErrors: every failure matches llm.ErrUnknownModel; those
// that mean something to the configuration say why.
func TestResolveErrors(t *testing.T) {
	c := multi(t)
	c.DefaultModel = ""
	tests := []struct {
		name   string
		model  string
		inline json.RawMessage
		reason string // "" for a plain unknown-model error
	}{
		{name: "unknown", model: "gpt-4o"},
		{name: "script name", model: "script:demo"},
		{name: "inline script", model: "", inline: json.RawMessage(`{"turns":[]}`)},
		{name: "no name, no default", model: ""},
		{name: "ambiguous", model: "qwen3-8b", reason: `model "qwen3-8b" is ambiguous: name one of local/qwen3-8b, vllm/qwen3-8b`},
		{name: "key not set", model: "openrouter/openai/gpt-4o", reason: `$OPENROUTER_API_KEY is not set: it holds the API key of provider "openrouter"`},
	}
	r := NewResolver(c)
	r.lookupEnv = env{}.lookup
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Resolve(tt.model, tt.inline)
			if !errors.Is(err, llm.ErrUnknownModel) {
				t.Fatalf("Resolve: %v, want an unknown-model error", err)
			}
			var u *llm.UnknownModelError
			if !errors.As(err, &u) {
				t.Fatalf("Resolve: %T, want *llm.UnknownModelError", err)
			}
			reason := ""
			if u.Err != nil {
				reason = u.Err.Error()
			}
			equal(t, "reason", reason, tt.reason)
		})
	}
}

// TestResolveZeroConfig: with only OPENAI_API_KEY, any name goes to
// OpenAI, with the built-in window.
func TestResolveZeroConfig(t *testing.T) {
	e := env{OpenAIKeyEnv: "sk-test"}
	r := NewResolver(FromEnv(e.lookup))
	r.lookupEnv = e.lookup
	m, err := r.Resolve("gpt-4o-mini", nil)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	equal(t, "name", m.Name, "openai/gpt-4o-mini")
	equal(t, "id", m.ID, "gpt-4o-mini")
	equal(t, "window", m.ContextWindow, int64(128000))
	equal(t, "base URL", m.Provider.(*openai.Provider).BaseURL(), DefaultOpenAIBaseURL)
	equal(t, "cost", m.Cost, llm.Cost{})
}

// TestChain: names the configuration does not know go on to the next
// resolver; its own errors stop the chain.
func TestChain(t *testing.T) {
	models := llm.Chain(NewResolver(multi(t)), script.NewResolver(""))
	m, err := models.Resolve("script:demo", nil)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	equal(t, "name", m.Name, "script:demo")
	_, err = models.Resolve("qwen3-8b", nil)
	equal(t, "error", err.Error(), `unknown model "qwen3-8b": model "qwen3-8b" is ambiguous: name one of local/qwen3-8b, vllm/qwen3-8b`)
}

// TestList lists every configured model with its window, the default
// first, and the chain with the scripted resolver adds script:demo once.
func TestList(t *testing.T) {
	cfg, err := Parse([]byte(`{"default_model": "qwen3-8b", "providers": {
		"local": {"base_url": "http://127.0.0.1:1/v1", "context_window": 32000,
			"models": {"a-model": {}, "qwen3-8b": {"context_window": 40000}}},
		"openai": {"base_url": "https://api.openai.com/v1", "models": ["gpt-4o", "some-private-model"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	chain := llm.Chain(NewResolver(cfg), script.NewResolver(""), script.NewResolver(""))
	got := chain.(llm.Lister).List()
	want := []llm.Listing{
		{Name: "local/qwen3-8b", ContextWindow: 40000},
		{Name: "local/a-model", ContextWindow: 32000},
		{Name: "openai/gpt-4o", ContextWindow: 128000},
		{Name: "openai/some-private-model"},
		{Name: "script:demo", ContextWindow: 8000},
	}
	if len(got) != len(want) {
		t.Fatalf("List = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("List[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestResolveSharesProviders: the models of one provider share its
// Provider (openai-go's client within is about 3 KiB, which every session
// kept), a key that changed makes a new one, and another provider has its
// own.
func TestResolveSharesProviders(t *testing.T) {
	c := &Config{Providers: map[string]*Provider{
		"a": {BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: "A_KEY", Models: map[string]*Model{"m": {}, "n": {}}},
		"b": {BaseURL: "http://127.0.0.1:2/v1", Models: map[string]*Model{"m": {}}},
	}}
	keys := env{"A_KEY": "k1"}
	r := NewResolver(c)
	r.lookupEnv = keys.lookup
	provider := func(name string) llm.Provider {
		t.Helper()
		m, err := r.Resolve(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m.Provider
	}
	first := provider("a/m")
	if provider("a/m") != first || provider("a/n") != first {
		t.Error("the models of provider a do not share its Provider")
	}
	if provider("b/m") == first {
		t.Error("providers a and b share a Provider")
	}
	keys["A_KEY"] = "k2"
	if provider("a/m") == first {
		t.Error("a new key kept the Provider made with the old one")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := make([]*llm.Model, 1000)
	for i := range kept {
		kept[i], _ = r.Resolve("a/m", nil)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	if per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(len(kept)); per > 512 {
		t.Errorf("a resolved model keeps %d B, want at most 512 (3.6 KiB with a Provider of its own)", per)
	}
}
