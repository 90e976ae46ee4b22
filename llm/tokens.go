package llm

import "unicode/utf8"

// EstimateTokens estimates the tokens of s at 4 characters (runes) a
// token, rounded up, as the protocol's scripted model does. It is used
// when a provider reports no usage.
func EstimateTokens(s string) int64 {
	return tokens(utf8.RuneCountInString(s))
}

// EstimateUsage estimates a response's usage at 4 characters a token: input
// counts req's system prompt and the content, thinking and tool call
// arguments of every message, and each image as ImageTokens
// (LowDetailImageTokens at detail low); output counts those of msg.
func EstimateUsage(req *Request, msg *Message) *Usage {
	n := utf8.RuneCountInString(req.System)
	for _, m := range req.Messages {
		n += messageChars(m)
	}
	in, out := tokens(n), tokens(messageChars(msg))
	return &Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
}

// Overflowed tells whether usage u shows that a request overflowed a
// context window of window tokens without an error, as servers that
// truncate the prompt (Ollama, llama.cpp with context shift) do: the
// prompt alone fills the window, or prompt and output together exceed it.
// It is false when u is nil or the window unknown (0 or less).
func Overflowed(u *Usage, window int64) bool {
	if u == nil || window <= 0 {
		return false
	}
	in := u.GetInputTokens()
	return in >= window || in+u.GetOutputTokens() > window
}

// messageChars is the length in characters of m's content, thinking and
// tool call arguments, and 4 for each token its images count
// (imageTokens).
func messageChars(m *Message) int {
	n := utf8.RuneCountInString(m.GetContent()) + utf8.RuneCountInString(m.GetThinking())
	for _, c := range m.GetToolCalls() {
		n += utf8.RuneCount(c.GetArgs().GetJson())
	}
	for _, img := range m.GetImages() {
		n += 4 * int(imageTokens(img))
	}
	return n
}

// tokens is EstimateTokens for a length in characters.
func tokens(n int) int64 { return (int64(n) + 3) / 4 }
