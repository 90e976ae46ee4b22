package llm

import (
	"strings"

	"google.golang.org/protobuf/proto"
)

// MergeSameRole returns msgs with each run of consecutive user messages,
// and each run of consecutive assistant messages, merged into one message:
// contents (and thinking) joined with a blank line ("\n\n"), empty ones
// skipped, and the tool calls of an assistant run (the images of a user
// run) concatenated in order.
// Tool messages are never merged. It is for provider APIs that reject two
// messages of one role in a row.
//
// msgs is not modified: merged messages are new (their tool calls cloned),
// and the others are the same pointers as in msgs.
func MergeSameRole(msgs []*Message) []*Message {
	out := make([]*Message, 0, len(msgs))
	for i := 0; i < len(msgs); {
		j := i + 1
		if role := msgs[i].GetRole(); role == RoleUser || role == RoleAssistant {
			for j < len(msgs) && msgs[j].GetRole() == role {
				j++
			}
		}
		if j-i == 1 {
			out = append(out, msgs[i])
		} else {
			out = append(out, merge(msgs[i:j]))
		}
		i = j
	}
	return out
}

// merge returns one new message holding the run of same-role messages.
func merge(run []*Message) *Message {
	var content, thinking []string
	m := &Message{Role: run[0].GetRole()}
	for _, r := range run {
		if c := r.GetContent(); c != "" {
			content = append(content, c)
		}
		if t := r.GetThinking(); t != "" {
			thinking = append(thinking, t)
		}
		m.Images = append(m.Images, r.GetImages()...)
		for _, tc := range r.GetToolCalls() {
			m.ToolCalls = append(m.ToolCalls, proto.Clone(tc).(*ToolCall))
		}
	}
	m.Content = strings.Join(content, "\n\n")
	m.Thinking = strings.Join(thinking, "\n\n")
	return m
}
