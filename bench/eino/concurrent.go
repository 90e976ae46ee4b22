package main

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"

	"github.com/tack-run/tack/bench/internal/measure"
)

// turns1000 runs p.Sessions conversations at once, each an agent and
// runner on a scripted model of its own (made before the clock), each
// p.Warmup untimed turns and then p.Turns timed ones back to back on a
// goroutine of its own: Runner.Run with the conversation so far and the
// prompt, the answer (measure.Answer) streamed in five chunks read to its
// end, the next turn. Eino keeps no conversation, so each goroutine keeps
// its own, as a caller of a session would: the prompt and the answer are
// appended after every turn. The clock runs from releasing them all to
// the last one done. Each turn must yield the answer.
func turns1000(p *measure.Params, out *measure.Output) {
	answer := []turn{{Text: measure.Answer, ChunkSize: measure.AnswerChunk}}
	runners := make([]*adk.Runner, p.Sessions)
	histories := make([][]adk.Message, p.Sessions)
	for i := range runners {
		runners[i] = newRunner(answer)
	}
	ctx := context.Background()
	run := func(turns int) {
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, r := range runners {
			wg.Go(func() {
				<-start
				for range turns {
					msgs := append(histories[i], schema.UserMessage("go"))
					var text strings.Builder
					_, err := drain(r.Run(ctx, msgs), func(m *schema.Message) { text.WriteString(m.Content) })
					if err != nil || text.String() != measure.Answer {
						measure.Fatal("turn: %q, error %v; want %q", text.String(), err, measure.Answer)
					}
					histories[i] = append(msgs, schema.AssistantMessage(text.String(), nil))
				}
			})
		}
		close(start)
		wg.Wait()
	}
	run(p.Warmup)
	cpu0, t0 := measure.CPUTime(), time.Now()
	run(p.Turns)
	measure.ConcurrentTurns(p, out, measure.CPUTime()-cpu0, time.Since(t0))
}
