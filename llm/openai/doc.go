// Package openai is the llm.Provider for OpenAI-compatible servers: OpenAI
// itself, vLLM, Ollama, llama.cpp's server, LM Studio, and gateways such as
// LiteLLM and OpenRouter. It streams Chat Completions through
// github.com/openai/openai-go/v3 (the request, its options and
// middleware, the SSE framing) and smooths over how the servers differ.
// The request's body and each chunk it decodes are small structs of its
// own (request.go, chunk.go), encoded and decoded by encoding/json: the
// SDK's parameter types marshal by reflection over every field, about
// nine times slower for a 40-message history (BenchmarkBuildBody), and
// TestBodyIsTheSDKs holds the body to what they would send.
//
// # Usage
//
//	p := openai.New("http://127.0.0.1:8000/v1", openai.WithAPIKey(key), openai.WithAPIKeyEnv("LOCAL_API_KEY"))
//	resp, err := p.Stream(ctx, &llm.Request{Model: "qwen3-8b", System: sys, Messages: history, Tools: specs}, emit)
//
// Package config (github.com/tack-run/tack/config) builds Providers from
// the configuration file; most callers get one through its Resolver.
//
// The request carries the system prompt first, then the history after
// llm.Repair and llm.MergeSameRole, with each batch of tool results in the
// order of its calls; thinking is not sent back. Tool call arguments go
// back verbatim when they are a JSON object, else as {}. The tools are
// function tools, and stream_options.include_usage is set.
//
// Stream emits, in order:
//
//   - ChunkThinkingStart once, then ChunkThinking, for reasoning that the
//     server streams as reasoning_content (vLLM, llama.cpp, DeepSeek) or
//     reasoning (Ollama, OpenRouter, newer vLLM);
//   - ChunkText for text deltas, and for a refusal (stop reason
//     llm.StopRefusal);
//   - ChunkToolCall for each tool call once the stream has ended: in index
//     order, with a generated id where the server sent none (or gave one
//     to two calls of the response), {} for empty arguments, and
//     arguments that are not valid JSON passed on verbatim. An id the
//     history holds already is passed on as the server sent it: the
//     session replaces it (it knows the whole history, a trimmed request
//     does not). Deltas are accumulated by
//     index, or by id where the index is missing or -1 (llama.cpp) or
//     shared by several calls, and whole calls in one delta (Ollama) work
//     too;
//   - ChunkRetry before each retry, ChunkStalled during silences (below).
//
// Finish reasons map to stop reasons: stop → llm.StopEnd, tool_calls (or
// any response with tool calls) → llm.StopToolCalls, length →
// llm.StopLength, content_filter → llm.StopRefusal. Response.Usage holds
// prompt_tokens as InputTokens (cached tokens are part of it, not added),
// completion_tokens as OutputTokens, and the cached and reasoning token
// details; it is nil when the server reported no usage (Ollama before it
// honoured include_usage), and the runtime estimates then. Costs are the
// runtime's business.
//
// Errors: an HTTP error response and an error object in a stream that
// began with HTTP 200 (data: {"error": ...}, or Anthropic's event: error
// with {"type": "error", "error": ...}) are classified alike. An
// insufficient_quota anywhere is a billing problem. Else the status
// decides — the HTTP one, or a numeric code or status in the error
// object: 401 a refused key, 402 payment, 403 a forbidden model, 404 an
// unknown model, 408, 409, 429 and 5xx passing trouble, another 4xx an
// invalid request. A code or type that names what to fix overrides a
// plain 4xx (which is never retried), and any known code or type decides
// where there is no status: invalid_api_key and authentication_error are
// a refused key, model_not_found and not_found_error an unknown model,
// content_filter and content_policy_violation a content policy refusal,
// invalid_request_error an invalid request; rate_limit_exceeded,
// rate_limit_error, overloaded_error, server_error and api_error are
// passing trouble (classify.go lists them all, with Google's textual
// statuses). An error that says nothing usable is passing trouble too.
//
// Retries: passing trouble and connection failures are retried while
// nothing has been output, up to WithRetries times, after an exponential
// backoff (WithBackoff) or the wait the server asks for in retry-after-ms
// or Retry-After (seconds or an HTTP date, up to MaxRetryAfter). Each
// retry is announced by ChunkRetry (Attempt, Delay, and the reason, such
// as "HTTP 429: rate limited"); the wait ends at once when ctx is
// cancelled. The SDK's own retries are off. Other failures, and any
// failure after output began, return an *llm.Error at once; its message
// says what to fix (the key's environment variable, the model name, the
// base URL).
//
// Stalls: after each silence of the stall interval (WithStall, 30 s) with
// no chunk — a keep-alive comment is not one — Stream emits ChunkStalled
// with the silence so far; when the silence reaches the limit (120 s) the
// request is cancelled and, if nothing was output yet, sent once more
// (announced by ChunkRetry); else, or when it stalls again, Stream returns
// an *llm.Error.
//
// Context overflow: the overflow errors of OpenAI, vLLM, llama.cpp,
// Ollama and the gateways (overflow.go lists their texts), over HTTP or
// in the stream and whatever their status, return an *llm.Error with
// Overflow set, never retried. llm.Overflowed tells when
// usage shows an overflow that the server hid by truncating the prompt.
//
// # Concurrency
//
// A Provider is immutable once made; Stream may be called from many
// goroutines at once. Each Stream call reads the response on a goroutine
// of its own but calls emit only on the calling goroutine, never after
// returning. When ctx is cancelled, Stream returns ctx.Err() at once, from
// any phase (connecting, waiting to retry, streaming); the reading
// goroutine ends as soon as the HTTP transport lets go.
//
// # Testing
//
// The tests run httptest servers that speak each dialect byte for byte as
// the real servers do — OpenAI, vLLM, Ollama, llama.cpp and an
// OpenRouter-style gateway with SSE comments and an error object mid-stream
// — and assert the exact chunks, responses, usage and errors, and the
// request bodies sent. Each class of error is sent both as an HTTP error
// response and as an error event in a 200 stream, and must be classified
// alike. Retry waits go through an injected sleeper, stalls
// use millisecond timers, and goleak checks that no goroutine outlives the
// tests.
package openai
