package llm

import (
	"fmt"
	"strings"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// call returns a tool call with id and no-op arguments.
func call(id string) *ToolCall {
	return &ToolCall{Id: id, Name: "echo", Args: &eventsv1.RawJSON{Json: []byte(`{"text":"` + id + `"}`)}}
}

// asst returns an assistant message calling ids.
func asst(text string, ids ...string) *Message {
	m := AssistantMessage(text)
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, call(id))
	}
	return m
}

// result returns a successful tool result for id.
func result(id string) *Message { return ToolResultMessage(id, "ok "+id, false) }

// brief renders msgs compactly for failure messages and comparisons:
// u:text, a:text[c1,c2], t:id=content(!).
func brief(msgs []*Message) string {
	var parts []string
	for _, m := range msgs {
		switch m.GetRole() {
		case RoleUser:
			parts = append(parts, "u:"+m.GetContent())
		case RoleAssistant:
			var ids []string
			for _, c := range m.GetToolCalls() {
				ids = append(ids, c.GetId())
			}
			parts = append(parts, fmt.Sprintf("a:%s%v", m.GetContent(), ids))
		case RoleTool:
			s := "t:" + m.GetToolCallId() + "=" + m.GetContent()
			if m.GetIsError() {
				s += "!"
			}
			parts = append(parts, s)
		default:
			parts = append(parts, "?"+m.GetRole())
		}
	}
	return strings.Join(parts, " | ")
}
