package llm

// EstimateTokens estimates the tokens of s at 4 bytes a token, rounded up:
// (len(s)+3)/4. It counts bytes, not runes, so non-ASCII text counts
// higher, as it does with real tokenizers. It is used when a provider
// reports no usage.
func EstimateTokens(s string) int64 {
	return (int64(len(s)) + 3) / 4
}
