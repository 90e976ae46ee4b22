package llmtest

import (
	"context"

	"github.com/tack-run/tack/llm"
)

// ProviderFunc is an llm.Provider made of a function.
type ProviderFunc func(ctx context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error)

// Stream calls f.
func (f ProviderFunc) Stream(ctx context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
	return f(ctx, req, emit)
}
