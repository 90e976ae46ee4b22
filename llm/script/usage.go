package script

import "github.com/tack-run/tack/llm"

// usage returns the turn's usage as given, or else llm.EstimateUsage.
func usage(t *Turn, req *llm.Request, msg *llm.Message) *llm.Usage {
	if t.Usage == nil {
		return llm.EstimateUsage(req, msg)
	}
	in, out := t.Usage.InputTokens, t.Usage.OutputTokens
	return &llm.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
}
