package main

import (
	"sync"
	"time"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"

	"github.com/tack-run/tack/bench/internal/measure"
)

// turns1000 runs p.Sessions sessions at once, each p.Warmup untimed
// turns and then p.Turns timed ones back to back: the prompt, the answer
// (measure.Answer) streamed in five chunks, agent_end, the next prompt.
// Every session is spawned and subscribed before, and read by a
// goroutine of its own; the clock runs from releasing them all to the
// last one done. Each turn must end completed with the answer.
func turns1000(p *measure.Params, out *measure.Output) {
	rt := newRuntime(newModels(map[string][]turn{
		"answer": {{Text: measure.Answer, ChunkSize: measure.AnswerChunk}},
	}))
	defer rt.Close()
	sessions := make([]*tack.Session, p.Sessions)
	subs := make([]*tack.Subscription, p.Sessions)
	for i := range sessions {
		sessions[i] = spawn(rt, "bench:answer")
		subs[i] = subscribe(sessions[i], 0)
	}
	run := func(turns int) {
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, s := range sessions {
			wg.Go(func() {
				<-start
				for range turns {
					prompt(s, "go")
					var text string
					end := until(subs[i].C, func(ev *eventsv1.Event) bool {
						if rc := ev.GetResponseComplete(); rc != nil {
							text = rc.GetMessage().GetContent()
						}
						return ev.GetAgentEnd() != nil
					})
					if r := end.GetAgentEnd().GetReason(); r != "completed" || text != measure.Answer {
						measure.Fatal("turn ended %s with %q, want completed with %q", r, text, measure.Answer)
					}
				}
			})
		}
		close(start)
		wg.Wait()
	}
	run(p.Warmup)
	cpu0, t0 := measure.CPUTime(), time.Now()
	run(p.Turns)
	wall, cpu := time.Since(t0), measure.CPUTime()-cpu0
	for _, s := range sessions {
		s.Close()
	}
	measure.ConcurrentTurns(p, out, cpu, wall)
}
