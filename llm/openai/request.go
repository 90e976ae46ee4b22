package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
)

// buildParams turns req into Chat Completions parameters: the system
// prompt first, then the history (see history), the tools, and
// stream_options.include_usage so that servers report usage.
func buildParams(req *llm.Request) (oa.ChatCompletionNewParams, *llm.Error) {
	var params oa.ChatCompletionNewParams
	if req.Model == "" {
		return params, &llm.Error{Message: "openai: the request names no model"}
	}
	tools, err := toolParams(req.Tools)
	if err != nil {
		return params, err
	}
	params.Model = shared.ChatModel(req.Model)
	params.Messages = messageParams(req.System, req.Messages)
	params.Tools = tools
	params.StreamOptions.IncludeUsage = oa.Bool(true)
	return params, nil
}

// messageParams converts the system prompt and history.
func messageParams(system string, msgs []*llm.Message) []oa.ChatCompletionMessageParamUnion {
	hist := history(msgs)
	out := make([]oa.ChatCompletionMessageParamUnion, 0, len(hist)+1)
	if system != "" {
		out = append(out, oa.SystemMessage(system))
	}
	for _, m := range hist {
		switch m.GetRole() {
		case llm.RoleUser:
			out = append(out, userParam(m))
		case llm.RoleAssistant:
			out = append(out, oa.ChatCompletionMessageParamUnion{OfAssistant: assistantParam(m)})
		case llm.RoleTool:
			out = append(out, oa.ToolMessage(m.GetContent(), m.GetToolCallId()))
		}
	}
	return out
}

// userParam converts a user message: its text alone, or, with images, a
// text part (when there is text) and an image_url part per image.
func userParam(m *llm.Message) oa.ChatCompletionMessageParamUnion {
	if len(m.GetImages()) == 0 {
		return oa.UserMessage(m.GetContent())
	}
	var parts []oa.ChatCompletionContentPartUnionParam
	if m.GetContent() != "" {
		parts = append(parts, oa.TextContentPart(m.GetContent()))
	}
	for _, img := range m.GetImages() {
		p := oa.ChatCompletionContentPartImageImageURLParam{URL: img.GetUrl()}
		if d := img.GetDetail(); d != "" {
			p.Detail = d
		}
		parts = append(parts, oa.ImageContentPart(p))
	}
	return oa.UserMessage(parts)
}

// history makes msgs fit to send: llm.Repair, then llm.MergeSameRole, then
// each batch of tool results in the order of its calls. Texts, including
// "[interrupted]" marks, are kept as they are.
func history(msgs []*llm.Message) []*llm.Message {
	repaired, _ := llm.Repair(msgs)
	return orderResults(llm.MergeSameRole(repaired))
}

// orderResults sorts the tool results after each assistant message into
// the order of its calls. msgs is not modified.
func orderResults(msgs []*llm.Message) []*llm.Message {
	out, cloned := msgs, false
	for i := 0; i < len(out); i++ {
		calls := out[i].GetToolCalls()
		if out[i].GetRole() != llm.RoleAssistant || len(calls) < 2 {
			continue
		}
		j := i + 1
		for j < len(out) && out[j].GetRole() == llm.RoleTool {
			j++
		}
		pos := make(map[string]int, len(calls))
		for k, c := range calls {
			pos[c.GetId()] = k
		}
		byCall := func(a, b *llm.Message) int { return pos[a.GetToolCallId()] - pos[b.GetToolCallId()] }
		if slices.IsSortedFunc(out[i+1:j], byCall) {
			continue
		}
		if !cloned {
			out, cloned = slices.Clone(msgs), true
		}
		slices.SortStableFunc(out[i+1:j], byCall)
	}
	return out
}

// assistantParam converts an assistant message. Thinking is not sent back:
// OpenAI rejects unknown message fields, and DeepSeek rejects
// reasoning_content in requests.
func assistantParam(m *llm.Message) *oa.ChatCompletionAssistantMessageParam {
	a := &oa.ChatCompletionAssistantMessageParam{}
	calls := m.GetToolCalls()
	if m.GetContent() != "" || len(calls) == 0 {
		a.Content.OfString = oa.String(m.GetContent())
	}
	for _, c := range calls {
		a.ToolCalls = append(a.ToolCalls, oa.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &oa.ChatCompletionMessageFunctionToolCallParam{
				ID: c.GetId(),
				Function: oa.ChatCompletionMessageFunctionToolCallFunctionParam{
					Name:      tools.WireName(c.GetName()),
					Arguments: argsParam(c.GetArgs().GetJson()),
				},
			},
		})
	}
	return a
}

// argsParam returns tool call arguments to send back: verbatim when they
// are a JSON object, else "{}". Servers that parse them (Ollama, vLLM)
// reject the whole request otherwise; the call's error result, which says
// what was wrong, stays in the history.
func argsParam(args []byte) string {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return "{}"
	}
	return string(args)
}

// toolParams converts tool specs to function tools.
func toolParams(specs []llm.ToolSpec) ([]oa.ChatCompletionToolUnionParam, *llm.Error) {
	out := make([]oa.ChatCompletionToolUnionParam, 0, len(specs))
	for _, s := range specs {
		params := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(bytes.TrimSpace(s.Parameters)) > 0 {
			params = nil
			if err := json.Unmarshal(s.Parameters, &params); err != nil || params == nil {
				return nil, &llm.Error{Message: fmt.Sprintf("openai: the parameters of tool %q are not a JSON Schema object", s.Name)}
			}
		}
		def := shared.FunctionDefinitionParam{Name: tools.WireName(s.Name), Parameters: params}
		if s.Description != "" {
			def.Description = oa.String(s.Description)
		}
		out = append(out, oa.ChatCompletionFunctionTool(def))
	}
	return out, nil
}

// wireNames maps the names the server knows the request's tools by back
// to the tools' names, for the tools whose names are sent changed
// (tools.WireName: "fs/read_file" goes as "fs__read_file").
func wireNames(specs []llm.ToolSpec) map[string]string {
	names := map[string]string{}
	for _, s := range specs {
		if w := tools.WireName(s.Name); w != s.Name {
			names[w] = s.Name
		}
	}
	return names
}

// unwire gives c back the name of the tool it calls, when the server
// knew it by another (see wireNames).
func unwire(c *llm.ToolCall, names map[string]string) {
	if n, ok := names[c.GetName()]; ok {
		c.Name = n
	}
}

// callIDs returns the ids of the tool calls in msgs.
func callIDs(msgs []*llm.Message) map[string]bool {
	ids := map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.GetToolCalls() {
			ids[c.GetId()] = true
		}
	}
	return ids
}
