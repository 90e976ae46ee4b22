package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
)

// sdkParams is the request as openai-go's own parameter types say it,
// for TestBodyIsTheSDKs: what Tack sent until it encoded its requests
// itself.
func sdkParams(t testing.TB, req *llm.Request) oa.ChatCompletionNewParams {
	t.Helper()
	var params oa.ChatCompletionNewParams
	params.Model = shared.ChatModel(req.Model)
	params.Messages = []oa.ChatCompletionMessageParamUnion{}
	if req.System != "" {
		params.Messages = append(params.Messages, oa.SystemMessage(req.System))
	}
	for _, m := range history(req.Messages) {
		switch m.GetRole() {
		case llm.RoleUser:
			if len(m.GetImages()) == 0 {
				params.Messages = append(params.Messages, oa.UserMessage(m.GetContent()))
				continue
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
			params.Messages = append(params.Messages, oa.UserMessage(parts))
		case llm.RoleAssistant:
			a := &oa.ChatCompletionAssistantMessageParam{}
			if m.GetContent() != "" || len(m.GetToolCalls()) == 0 {
				a.Content.OfString = oa.String(m.GetContent())
			}
			for _, c := range m.GetToolCalls() {
				a.ToolCalls = append(a.ToolCalls, oa.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &oa.ChatCompletionMessageFunctionToolCallParam{ID: c.GetId(), Function: oa.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name: tools.WireName(c.GetName()), Arguments: argsParam(c.GetArgs().GetJson())}},
				})
			}
			params.Messages = append(params.Messages, oa.ChatCompletionMessageParamUnion{OfAssistant: a})
		case llm.RoleTool:
			params.Messages = append(params.Messages, oa.ToolMessage(m.GetContent(), m.GetToolCallId()))
		}
	}
	params.Tools = []oa.ChatCompletionToolUnionParam{}
	for _, s := range req.Tools {
		fp := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(s.Parameters) > 0 {
			fp = nil
			if err := json.Unmarshal(s.Parameters, &fp); err != nil {
				t.Fatal(err)
			}
		}
		def := shared.FunctionDefinitionParam{Name: tools.WireName(s.Name), Parameters: fp}
		if s.Description != "" {
			def.Description = oa.String(s.Description)
		}
		params.Tools = append(params.Tools, oa.ChatCompletionFunctionTool(def))
	}
	params.StreamOptions.IncludeUsage = oa.Bool(true)
	return params
}

// TestBodyIsTheSDKs: the body Tack encodes is, as JSON, what openai-go
// marshals its own parameter types to for the same request (with
// "stream": true, which Tack set through the SDK before) — every kind of
// message, images with and without detail, tool calls with arguments
// that are and are not an object, names sent changed, text that JSON
// must escape, tools with and without parameters and description, and no
// history or tools at all.
func TestBodyIsTheSDKs(t *testing.T) {
	asst := llm.AssistantMessage("")
	asst.ToolCalls = []*llm.ToolCall{call("c1", "fs/read_file", `{"path":"a"}`), call("c2", "echo", `[1]`), call("c3", "echo", ``)}
	talk := llm.AssistantMessage("Sure <b>&</b> \"quoted\"\n\ttabs \u2028 é 🙂")
	talk.ToolCalls = []*llm.ToolCall{call("c4", "echo", ` {"text":"x"} `)}
	withImages := llm.UserMessage("look")
	withImages.Images = []*llm.Image{{Url: "data:image/png;base64,AAAA", Detail: "low"}, {Url: "https://example.com/y.png"}}
	onlyImage := llm.UserMessage("")
	onlyImage.Images = []*llm.Image{{Url: "https://example.com/z.png", Detail: "high"}}
	for name, req := range map[string]*llm.Request{
		"empty": {Model: "m"},
		"everything": {Model: "qwen3", System: "Be terse.\n<rules>", Messages: []*llm.Message{
			llm.UserMessage("first"), asst,
			llm.ToolResultMessage("c2", "bad args", true), llm.ToolResultMessage("c1", "text", false), llm.ToolResultMessage("c3", "", true),
			talk, llm.ToolResultMessage("c4", "x", false),
			llm.AssistantMessage(""), withImages, llm.AssistantMessage("ok"), onlyImage, llm.AssistantMessage("Partial\n\n[interrupted]"),
		}, Tools: []llm.ToolSpec{
			{Name: "fs/read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "echo"},
			{Name: "noop", Description: "Nothing.", Parameters: json.RawMessage(` {"type":"object"} `)},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			ours, lerr := buildBody(req)
			if lerr != nil {
				t.Fatal(lerr)
			}
			theirs, err := json.Marshal(sdkParams(t, req))
			if err != nil {
				t.Fatal(err)
			}
			var got, want map[string]any
			if err := json.Unmarshal(ours, &got); err != nil {
				t.Fatalf("%v: %s", err, ours)
			}
			if err := json.Unmarshal(theirs, &want); err != nil {
				t.Fatal(err)
			}
			want["stream"] = true
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("body\n%s\nthe SDK's\n%s", ours, theirs)
			}
		})
	}
}

// BenchmarkBuildBody times encoding a request of a 40-message history
// with tool calls, and the same through openai-go's parameter types.
func BenchmarkBuildBody(b *testing.B) {
	var msgs []*llm.Message
	for i := range 10 {
		asst := llm.AssistantMessage("")
		id := string(rune('a' + i))
		asst.ToolCalls = []*llm.ToolCall{call(id, "echo", `{"text":"ping"}`)}
		msgs = append(msgs, llm.UserMessage("go on"), asst, llm.ToolResultMessage(id, "ping", false), llm.AssistantMessage("done"))
	}
	req := &llm.Request{Model: "m", System: "Be terse.", Messages: msgs, Tools: []llm.ToolSpec{{Name: "echo", Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}}}
	b.Run("tack", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := buildBody(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(sdkParams(b, req)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
