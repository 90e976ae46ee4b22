package openai

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack/llm"
)

// promptly is how soon Stream must return after a cancel: the runtime
// must deliver an abort to subscribers within 100 ms.
const promptly = 100 * time.Millisecond

// TestCancel cancels the request in each phase and expects Stream to
// return context.Canceled promptly.
func TestCancel(t *testing.T) {
	firstEvents := strings.Join(strings.SplitAfter(openAIText, "\n\n")[:2], "")
	tests := []struct {
		name    string
		handler http.HandlerFunc
		// cancelOn is the chunk kind whose arrival cancels; 0 cancels
		// once the server has the request.
		cancelOn llm.ChunkKind
		chunks   []string
	}{
		{
			name:    "while waiting for the response",
			handler: silent,
			chunks:  []string{},
		},
		{
			name:     "during the retry wait",
			handler:  fail(429, rateLimited, "Retry-After", "30"),
			cancelOn: llm.ChunkRetry,
			chunks:   []string{"retry 1 30s HTTP 429: Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200."},
		},
		{
			name:     "mid-stream",
			handler:  silentAfter(firstEvents),
			cancelOn: llm.ChunkText,
			chunks:   []string{"text Hello"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arrived := make(chan struct{}, 1)
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				select {
				case arrived <- struct{}{}:
				default:
				}
				tt.handler(w, r)
			})
			// The real sleeper: the retry wait must end on cancel.
			p := New(srv.URL+"/v1", WithHTTPClient(srv.Client()))
			cancelled := make(chan time.Time, 1)
			cancelNow := func(cancel context.CancelFunc) {
				cancelled <- time.Now()
				cancel()
			}
			chunks, _, err := stream(t, p, request(), func(c llm.Chunk, cancel context.CancelFunc) {
				if c.Kind == tt.cancelOn {
					cancelNow(cancel)
				}
			}, func(cancel context.CancelFunc) {
				if tt.cancelOn == 0 {
					<-arrived
					cancelNow(cancel)
				}
			})
			returned := time.Now()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Stream: %v, want context.Canceled", err)
			}
			if took := returned.Sub(<-cancelled); took > promptly {
				t.Errorf("Stream returned %v after the cancel, want < %v", took, promptly)
			}
			equal(t, "chunks", show(chunks), tt.chunks)
		})
	}
}

// TestCancelledBefore: a request whose context is already done is not
// sent.
func TestCancelledBefore(t *testing.T) {
	srv := newServer(t, sse(openAIText))
	p, _ := srv.provider()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := p.Stream(ctx, request(), func(llm.Chunk) { t.Error("emit called") })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Stream: %v, want context.Canceled", err)
	}
	equal(t, "requests", srv.requests(), 0)
}
