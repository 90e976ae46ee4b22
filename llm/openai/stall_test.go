package openai

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/llmtest"
)

// Stall timers of the tests: reports every 40 ms, cancel at 100 ms.
// Reports carry the scheduled silence, so the chunks are exact; the
// intervals leave servers that do answer ample time to.
const (
	testStallAfter = 40 * time.Millisecond
	testStallLimit = 100 * time.Millisecond
)

// TestStalls runs servers that go silent and asserts the stall reports,
// the one retry, and the errors.
func TestStalls(t *testing.T) {
	firstEvents := strings.Join(strings.SplitAfter(openAIText, "\n\n")[:2], "")
	tests := []struct {
		name     string
		handlers []http.HandlerFunc
		chunks   []string
		requests int
		err      *llm.Error
	}{
		{
			name:     "never a byte, then retried once with success",
			handlers: []http.HandlerFunc{silent, sse(openAILength)},
			chunks:   []string{"stalled 40ms", "stalled 80ms", "retry 1 0s no data for 100ms", "text Once upon"},
			requests: 2,
		},
		{
			name:     "never a byte, twice",
			handlers: []http.HandlerFunc{silent},
			chunks:   []string{"stalled 40ms", "stalled 80ms", "retry 1 0s no data for 100ms", "stalled 40ms", "stalled 80ms"},
			requests: 2,
			err:      &llm.Error{Message: "no data for 100ms"},
		},
		{
			name:     "silent after output",
			handlers: []http.HandlerFunc{silentAfter(firstEvents)},
			chunks:   []string{"text Hello", "stalled 40ms", "stalled 80ms"},
			requests: 1,
			err:      &llm.Error{Message: "the stream stalled: no data for 100ms after output began"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.handlers...)
			p, _ := srv.provider(WithStall(testStallAfter, testStallLimit))
			chunks, _, err := llmtest.Collect(t, p, request())
			if tt.err == nil && err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if tt.err != nil {
				equal(t, "error", *asError(t, err), *tt.err)
			}
			equal(t, "chunks", show(chunks), tt.chunks)
			equal(t, "requests", srv.requests(), tt.requests)
		})
	}
}

// TestStallResumes: a stream that pauses past the stall interval, then
// goes on, is reported once and finishes normally.
func TestStallResumes(t *testing.T) {
	events := strings.SplitAfter(openAIText, "\n\n")
	resume := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeEvents(w, strings.Join(events[:2], ""))
		select {
		case <-resume:
		case <-r.Context().Done():
			return
		}
		writeEvents(w, strings.Join(events[2:], ""))
	})
	p, _ := srv.provider(WithStall(testStallAfter, time.Minute))
	var once sync.Once
	chunks, resp, err := stream(t, p, request(), func(c llm.Chunk, _ context.CancelFunc) {
		if c.Kind == llm.ChunkStalled {
			once.Do(func() { close(resume) })
		}
	})
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	equal(t, "chunks", show(chunks), []string{"text Hello", "stalled 40ms", "text , world."})
	equal(t, "content", resp.Message.GetContent(), "Hello, world.")
	equal(t, "input tokens", resp.Usage.GetInputTokens(), int64(1200))
}

// stream calls p.Stream with a cancellable context, passing each chunk and
// the cancel function to on, and checks the Provider contract. Each of
// also runs on a goroutine of its own while Stream runs.
func stream(t *testing.T, p llm.Provider, req *llm.Request, on func(llm.Chunk, context.CancelFunc), also ...func(context.CancelFunc)) ([]llm.Chunk, *llm.Response, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, f := range also {
		wg.Go(func() { f(cancel) })
	}
	var chunks []llm.Chunk
	resp, err := p.Stream(ctx, req, func(c llm.Chunk) {
		chunks = append(chunks, c)
		on(c, cancel)
	})
	for _, problem := range llmtest.Check(chunks, resp, err) {
		t.Errorf("llmtest: %s", problem)
	}
	return chunks, resp, err
}
