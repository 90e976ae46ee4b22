package openai

import "strings"

// overflowTexts are the phrases, in lower case, by which servers say a
// request does not fit the context window:
//
//   - OpenAI: code "context_length_exceeded", "This model's maximum context
//     length is 128000 tokens. However, your messages resulted in 130000
//     tokens. Please reduce the length of the messages." (OpenRouter, Groq,
//     Together and Mistral say "maximum context length" too);
//   - vLLM: "This model's maximum context length is 4096 tokens. However,
//     you requested 5000 tokens (...)", V1 engine "Prompt length of 5016 is
//     longer than the maximum model length of 4096", multimodal "The prompt
//     (total length 25938) is too long to fit into the model (context
//     length 4096)";
//   - llama.cpp server: type "exceed_context_size_error", "the request
//     exceeds the available context size, try increasing it";
//   - Ollama: "the input length exceeds the context length";
//   - gateways passing on Anthropic's "prompt is too long: 210000 tokens >
//     200000 maximum" and Gemini's "The input token count (N) exceeds the
//     maximum number of tokens allowed (M)".
var overflowTexts = []string{
	"context_length_exceeded",
	"maximum context length",
	"exceed_context_size_error",
	"exceeds the available context size",
	"longer than the maximum model length",
	"longer than the model's context length",
	"too long to fit into the model",
	"exceeds the context length",
	"prompt is too long",
	"exceeds the maximum number of tokens",
}

// overflowNear are phrases that mean an overflow when they occur together
// with "context length", "context window" or "context size" (Ollama and
// others vary the wording: "input exceeds context length").
var overflowNear = []string{"exceed", "too long", "longer than", "too large"}

// isOverflow tells whether an error text says the context window is
// exceeded.
func isOverflow(text string) bool {
	t := strings.ToLower(text)
	for _, s := range overflowTexts {
		if strings.Contains(t, s) {
			return true
		}
	}
	if !strings.Contains(t, "context length") && !strings.Contains(t, "context window") && !strings.Contains(t, "context size") {
		return false
	}
	for _, s := range overflowNear {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}
