package llm

// NoResultText is the content of the error tool result that Repair adds
// for a tool call that has no result.
const NoResultText = "interrupted: no result was recorded"

// UserMessage returns a user message with text.
func UserMessage(text string) *Message {
	return &Message{Role: RoleUser, Content: text}
}

// AssistantMessage returns an assistant message with text; callers set
// ToolCalls and Thinking before committing it.
func AssistantMessage(text string) *Message {
	return &Message{Role: RoleAssistant, Content: text}
}

// ToolResultMessage returns the result of tool call callID. isError marks
// a failed call (content then says why).
func ToolResultMessage(callID, content string, isError bool) *Message {
	return &Message{Role: RoleTool, ToolCallId: callID, Content: content, IsError: isError}
}
