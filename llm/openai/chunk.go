package openai

import "encoding/json"

// chunk is one Chat Completions stream chunk: the fields Tack reads,
// decoded with encoding/json. openai-go's own ChatCompletionChunk records
// the raw JSON and presence of every field besides its value, which made
// decoding chunks half the CPU of a turn through a server
// (docs/benchmarks.md); the request, its retries and the SSE framing stay
// openai-go's.
//
// Fields that servers fill in more than one way are kept raw and read
// leniently, as openai-go's decoding did: a value of another type is
// taken as absent, not as a broken stream.
type chunk struct {
	Choices []chunkChoice `json:"choices"`
	// Usage is present in the chunk that reports it (with
	// stream_options.include_usage), null or absent in the others.
	Usage *usage `json:"usage"`
}

type chunkChoice struct {
	Index        int64  `json:"index"`
	Delta        delta  `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

// delta is what a choice adds. Reasoning comes as reasoning_content
// (vLLM before 0.10, llama.cpp, DeepSeek) or reasoning (Ollama,
// OpenRouter, newer vLLM).
type delta struct {
	Content          string          `json:"content"`
	Refusal          string          `json:"refusal"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

// toolCallDelta is a piece of a tool call. Index is raw: llama.cpp and
// some gateways leave it out or send -1 or null.
type toolCallDelta struct {
	Index    json.RawMessage `json:"index"`
	ID       string          `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// index is the delta's index, -1 when it has none usable.
func (d *toolCallDelta) index() int64 {
	var i *int64
	if json.Unmarshal(d.Index, &i) != nil || i == nil || *i < 0 {
		return -1 // absent, null, -1 or not a number
	}
	return *i
}

// usage is reported usage. prompt_tokens already counts the cached tokens
// and completion_tokens the reasoning tokens.
type usage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}
