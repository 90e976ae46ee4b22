package script

import "github.com/tack-run/tack/llm"

// usage returns the turn's usage as given, or else estimated at 4 bytes a
// token (llm.EstimateTokens over the concatenated parts): input counts the
// system prompt and the content, thinking and tool call arguments of every
// message of req; output counts those of msg.
func usage(t *Turn, req *llm.Request, msg *llm.Message) *llm.Usage {
	var in, out int64
	if t.Usage != nil {
		in, out = t.Usage.InputTokens, t.Usage.OutputTokens
	} else {
		n := len(req.System)
		for _, m := range req.Messages {
			n += messageBytes(m)
		}
		in, out = tokens(n), tokens(messageBytes(msg))
	}
	return &llm.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
}

// messageBytes is the length of m's content, thinking and tool call
// arguments.
func messageBytes(m *llm.Message) int {
	n := len(m.GetContent()) + len(m.GetThinking())
	for _, c := range m.GetToolCalls() {
		n += len(c.GetArgs().GetJson())
	}
	return n
}

// tokens is llm.EstimateTokens for a length in bytes.
func tokens(n int) int64 { return (int64(n) + 3) / 4 }
