package config_test

import (
	"fmt"

	"github.com/tack-run/tack/config"
)

// A configuration with two local servers: a bare name resolves when one
// provider lists it, and windows resolve model > provider > table.
func ExampleParse() {
	cfg, err := config.Parse([]byte(`{
	  "default_model": "vllm/qwen3-8b",
	  "providers": {
	    "vllm": {"base_url": "http://127.0.0.1:8000/v1", "context_window": 32768,
	             "models": {"qwen3-8b": {"context_window": 40960}, "llama-3.1-8b": {}}},
	    "ollama": {"base_url": "http://127.0.0.1:11434/v1", "models": ["gemma3:12b"]}
	  }
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{"qwen3-8b", "gemma3:12b", "vllm/llama-3.1-8b"} {
		p, m, _ := cfg.Lookup(name)
		fmt.Printf("%s -> %s/%s, window %d\n", name, p, m, cfg.ContextWindow(p, m))
	}
	// Output:
	// qwen3-8b -> vllm/qwen3-8b, window 40960
	// gemma3:12b -> ollama/gemma3:12b, window 131072
	// vllm/llama-3.1-8b -> vllm/llama-3.1-8b, window 32768
}

// The built-in table takes the longest matching pattern.
func ExampleBuiltinWindow() {
	fmt.Println(config.BuiltinWindow("gpt-4o-mini"), config.BuiltinWindow("o1-mini"), config.BuiltinWindow("meta-llama/Llama-3.3-70B-Instruct"))
	// Output: 128000 128000 131072
}
