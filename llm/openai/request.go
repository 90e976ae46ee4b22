package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
)

// body is a Chat Completions request as Tack sends it. It holds what
// openai-go's ChatCompletionNewParams marshals to for the fields Tack sets
// (TestBodyIsTheSDKs holds the two together), and is encoded by
// encoding/json on plain structs: the SDK's encoder walks every field of
// its parameter types by reflection, and re-encoding the whole history
// with it at every request was a fifth of a turn's CPU through a local
// server (docs/benchmarks.md). openai-go still sends the request and
// decodes the stream.
type body struct {
	Model         string        `json:"model"`
	Messages      []wireMessage `json:"messages"`
	Tools         []wireTool    `json:"tools"`
	StreamOptions streamOptions `json:"stream_options"`
	Stream        bool          `json:"stream"`
}

// streamOptions asks servers to report usage in a last chunk.
type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// wireMessage is one message of the request. Content is a string, the
// parts of a user message with images, or nil (left out: an assistant
// message that only calls tools).
type wireMessage struct {
	Role       string     `json:"role"`
	Content    any        `json:"content,omitempty"`
	ToolCalls  []wireCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// wirePart is a part of a user message's content: text or an image.
type wirePart struct {
	Type     string     `json:"type"`
	Text     string     `json:"text,omitempty"`
	ImageURL *wireImage `json:"image_url,omitempty"`
}

type wireImage struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// wireCall is a tool call of an assistant message.
type wireCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// wireTool is a function tool the model may call.
type wireTool struct {
	Type     string       `json:"type"`
	Function wireToolSpec `json:"function"`
}

type wireToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptyParameters are the parameters of a tool that declares none.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// buildBody encodes req as a streaming Chat Completions request: the
// system prompt first, then the history (see history), the tools, and
// stream_options.include_usage so that servers report usage.
func buildBody(req *llm.Request) ([]byte, *llm.Error) {
	if req.Model == "" {
		return nil, &llm.Error{Message: "openai: the request names no model"}
	}
	tools, err := toolSpecs(req.Tools)
	if err != nil {
		return nil, err
	}
	b, jerr := json.Marshal(body{Model: req.Model, Messages: messages(req.System, req.Messages), Tools: tools,
		StreamOptions: streamOptions{IncludeUsage: true}, Stream: true})
	if jerr != nil {
		return nil, &llm.Error{Message: fmt.Sprintf("openai: encoding the request: %v", jerr)}
	}
	return b, nil
}

// messages converts the system prompt and history.
func messages(system string, msgs []*llm.Message) []wireMessage {
	hist := history(msgs)
	out := make([]wireMessage, 0, len(hist)+1)
	if system != "" {
		out = append(out, wireMessage{Role: "system", Content: system})
	}
	for _, m := range hist {
		switch m.GetRole() {
		case llm.RoleUser:
			out = append(out, wireMessage{Role: llm.RoleUser, Content: userContent(m)})
		case llm.RoleAssistant:
			out = append(out, assistantMessage(m))
		case llm.RoleTool:
			out = append(out, wireMessage{Role: llm.RoleTool, Content: m.GetContent(), ToolCallID: m.GetToolCallId()})
		}
	}
	return out
}

// userContent is a user message's content: its text alone, or, with
// images, a text part (when there is text) and an image_url part per
// image.
func userContent(m *llm.Message) any {
	if len(m.GetImages()) == 0 {
		return m.GetContent()
	}
	var parts []wirePart
	if m.GetContent() != "" {
		parts = append(parts, wirePart{Type: "text", Text: m.GetContent()})
	}
	for _, img := range m.GetImages() {
		parts = append(parts, wirePart{Type: "image_url", ImageURL: &wireImage{URL: img.GetUrl(), Detail: img.GetDetail()}})
	}
	return parts
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

// assistantMessage converts an assistant message. Thinking is not sent
// back: OpenAI rejects unknown message fields, and DeepSeek rejects
// reasoning_content in requests.
func assistantMessage(m *llm.Message) wireMessage {
	w := wireMessage{Role: llm.RoleAssistant}
	calls := m.GetToolCalls()
	if m.GetContent() != "" || len(calls) == 0 {
		w.Content = m.GetContent()
	}
	for _, c := range calls {
		w.ToolCalls = append(w.ToolCalls, wireCall{ID: c.GetId(), Type: "function",
			Function: wireFunction{Name: tools.WireName(c.GetName()), Arguments: argsParam(c.GetArgs().GetJson())}})
	}
	return w
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

// toolSpecs converts tool specs to function tools.
func toolSpecs(specs []llm.ToolSpec) ([]wireTool, *llm.Error) {
	out := make([]wireTool, 0, len(specs))
	for _, s := range specs {
		params := emptyParameters
		if raw := bytes.TrimSpace(s.Parameters); len(raw) > 0 {
			if raw[0] != '{' || !json.Valid(raw) {
				return nil, &llm.Error{Message: fmt.Sprintf("openai: the parameters of tool %q are not a JSON Schema object", s.Name)}
			}
			params = raw
		}
		out = append(out, wireTool{Type: "function", Function: wireToolSpec{Name: tools.WireName(s.Name), Description: s.Description, Parameters: params}})
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
