package openai

import (
	"encoding/json"
	"strings"

	"github.com/tack-run/tack/llm"
)

// accumulator builds one attempt's response from its chunks.
type accumulator struct {
	chunks          int
	text, thinking  strings.Builder
	thinkingStarted bool
	refused         bool
	finish          string
	calls           calls
	usage           *llm.Usage
}

// add applies chunk c, emitting text and thinking through out as they
// come. Only the first choice is read (Tack never asks for n > 1).
func (a *accumulator) add(c *chunk, out *output) {
	a.chunks++
	if c.Usage != nil {
		a.usage = usageOf(c.Usage)
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		d := &ch.Delta
		if r := reasoning(d); r != "" {
			if !a.thinkingStarted {
				a.thinkingStarted = true
				out.send(llm.Chunk{Kind: llm.ChunkThinkingStart})
			}
			a.thinking.WriteString(r)
			out.send(llm.Chunk{Kind: llm.ChunkThinking, Text: r})
		}
		if d.Content != "" {
			a.text.WriteString(d.Content)
			out.send(llm.Chunk{Kind: llm.ChunkText, Text: d.Content})
		}
		if d.Refusal != "" {
			a.refused = true
			a.text.WriteString(d.Refusal)
			out.send(llm.Chunk{Kind: llm.ChunkText, Text: d.Refusal})
		}
		for j := range d.ToolCalls {
			a.calls.add(&d.ToolCalls[j])
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
}

// reasoning returns the reasoning text of delta d, "" if none. The first
// non-empty field counts, as vLLM has sent both with the same text.
func reasoning(d *delta) string {
	for _, raw := range []json.RawMessage{d.ReasoningContent, d.Reasoning} {
		var s string
		if len(raw) > 0 && json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// response finishes the attempt: it emits each tool call, in order, and
// returns the response.
func (a *accumulator) response(out *output) *llm.Response {
	msg := llm.AssistantMessage(a.text.String())
	msg.Thinking = a.thinking.String()
	msg.ToolCalls = a.calls.done()
	for _, c := range msg.ToolCalls {
		out.emit(llm.Chunk{Kind: llm.ChunkToolCall, ToolCall: c})
	}
	return &llm.Response{Message: msg, StopReason: a.stopReason(len(msg.ToolCalls) > 0), Usage: a.usage}
}

// stopReason maps the finish reason. A response with tool calls stops for
// them whatever the server said (Ollama and some vLLM parsers say "stop").
func (a *accumulator) stopReason(hasCalls bool) string {
	switch {
	case hasCalls:
		return llm.StopToolCalls
	case a.refused:
		return llm.StopRefusal
	}
	switch a.finish {
	case "length", "max_tokens":
		return llm.StopLength
	case "content_filter":
		return llm.StopRefusal
	}
	return llm.StopEnd
}

// usageOf converts reported usage. prompt_tokens already counts the cached
// tokens (prompt_tokens_details.cached_tokens is a part of it, not an
// addition), and completion_tokens the reasoning tokens.
func usageOf(u *usage) *llm.Usage {
	return &llm.Usage{
		InputTokens:       u.PromptTokens,
		OutputTokens:      u.CompletionTokens,
		TotalTokens:       u.PromptTokens + u.CompletionTokens,
		CachedInputTokens: u.PromptTokensDetails.CachedTokens,
		ReasoningTokens:   u.CompletionTokensDetails.ReasoningTokens,
	}
}
