// Package script is the scripted model
// (docs/protocol.md#the-scripted-model): an llm.Provider that plays a JSON
// script of responses at scripted times. It is the default model of demos
// and of the runtime's tests, a documented provider rather than a mock.
//
// # Usage
//
// A script lists turns; each model request of a session takes the next
// one:
//
//	{
//	  "context_window": 8000,
//	  "turns": [
//	    {"delay_ms": 50, "text": "Let me look.", "chunk_size": 4, "chunk_delay_ms": 5,
//	     "tool_calls": [{"name": "sleep", "args": {"ms": 2000}}],
//	     "usage": {"input_tokens": 120, "output_tokens": 12}},
//	    {"thinking": "The user wants a summary.", "text": "Done."},
//	    {"error": {"status": 429, "message": "rate limited"}},
//	    {"stall_ms": 20000}
//	  ],
//	  "when_exhausted": "repeat_last"
//	}
//
// A turn plays in this order:
//
//  1. delay_ms: nothing, then the first chunk;
//  2. thinking: ChunkThinkingStart, then the thinking in ChunkThinking
//     chunks;
//  3. text: ChunkText chunks;
//  4. tool_calls: one ChunkToolCall each, at once after the text, with ids
//     c-N: N is 1 + the number of tool calls already in the session's
//     history (those of the request's messages and its CallsBefore) + the
//     index in the turn, so ids are unique in a session's history even
//     after a switch to another script; plus, for a history whose ids run
//     ahead of that count (a fork holds its source's ids but not the calls
//     its source compacted; an imported history may hold any), the most a
//     request has shown between its newest c-N and the number of calls up
//     to it;
//  5. error {status, message}: the request fails with that *llm.Error
//     after whatever the turn streamed (a mid-stream failure when it had
//     text); without it, the response is the assistant message with the
//     content, thinking and tool calls, stop reason tool_calls or
//     end_turn.
//
// Thinking and text are cut in chunks of chunk_size characters (runes; 0
// or absent sends each whole) and every chunk but the first waits
// chunk_delay_ms. stall_ms is a silence after the first thinking or text
// chunk (after delay_ms when the turn has none), then the turn goes on.
// usage {input_tokens, output_tokens} is reported as given; absent, it is
// estimated at 4 characters a token, the input from the system prompt and the
// content, thinking and tool call arguments of each message, the output
// from the response's. When the turns run out, when_exhausted says what
// comes next: repeat_last (the default), error (status 400 "script
// exhausted") or echo (the text of the last user message).
//
// The position is part of the session's stored state (the Provider is
// llm.Stateful), with how far the history's ids run ahead of its count of
// calls (step 4): a session restored after a restart goes on at the turn it
// had reached as of its last stored change. A turn cut short by the crash
// before its response was committed is played again; a turn whose response
// was committed is not. Switching a session to another script model starts
// that script at its first turn.
//
// Parse and Load read scripts, Demo is the built-in demo, New makes a
// Provider, and Resolver resolves "script:<path>", "script:demo" and
// inline scripts to llm.Models.
//
// # Concurrency
//
// A Provider keeps its position under a mutex, so concurrent Stream calls
// each take their own turn, but a Provider is meant for one session's
// sequential requests; make one per session (Resolve does). Stream emits on
// the calling goroutine and starts none. Every wait returns ctx.Err() as
// soon as ctx is cancelled. A Script is read-only once played, and may be
// shared by many Providers.
//
// # Testing
//
// The tests run in testing/synctest bubbles, so they assert exact chunk
// times without sleeping: delays, rune chunking, stalls, errors before and
// after text, each when_exhausted mode, and prompt returns on
// cancellation.
package script
