package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	"github.com/tack-run/tack/bench/internal/measure"
)

// echoTurns is the turn-overhead script: measure.TurnsPerRun-1 echo calls,
// then text.
func echoTurns() []turn {
	var ts []turn
	for range measure.TurnsPerRun - 1 {
		ts = append(ts, turn{ToolCalls: []call{{Name: "echo", Args: `{"text":"ping"}`}}})
	}
	return append(ts, turn{Text: "done"})
}

// turns times runs of measure.TurnsPerRun turns, one fresh agent and
// runner each (made before the clock starts), Query to the end of the
// event iterator.
func turns(p *measure.Params, out *measure.Output) {
	script, echo := echoTurns(), echoTool()
	batch := func(n int) (cpu, wall time.Duration) {
		runners := make([]*adk.Runner, n)
		for i := range runners {
			runners[i] = newRunner(script, echo)
		}
		cpu0, t0 := measure.CPUTime(), time.Now()
		for _, r := range runners {
			tools, err := drain(r.Query(context.Background(), "go"), nil)
			if err != nil || tools != measure.TurnsPerRun-1 {
				measure.Fatal("run: %d tool results, error %v", tools, err)
			}
		}
		return measure.CPUTime() - cpu0, time.Since(t0)
	}
	measure.TimeTurns(p, out, "turns", measure.TurnsPerRun, batch)
}

// reactTurns is turns on Eino's other agent, flow/agent/react, which
// compiles its graph once, in NewAgent. Its Stream yields the final answer;
// the messages before it come from a MessageFuture, read on a goroutine of
// its own as a subscriber would.
func reactTurns(p *measure.Params, out *measure.Output) {
	script, echo := echoTurns(), echoTool()
	ctx := context.Background()
	batch := func(n int) (cpu, wall time.Duration) {
		agents := make([]*react.Agent, n)
		for i := range agents {
			a, err := react.NewAgent(ctx, &react.AgentConfig{
				ToolCallingModel: newScripted(script),
				ToolsConfig:      compose.ToolsNodeConfig{Tools: []tool.BaseTool{echo}},
				MaxStep:          100,
			})
			if err != nil {
				measure.Fatal("agent: %v", err)
			}
			agents[i] = a
		}
		cpu0, t0 := measure.CPUTime(), time.Now()
		for _, a := range agents {
			opt, future := react.WithMessageFuture()
			sr, err := a.Stream(ctx, []*schema.Message{schema.UserMessage("go")}, opt)
			if err != nil {
				measure.Fatal("run: %v", err)
			}
			tools := make(chan int, 1)
			go func() {
				n := 0
				it := future.GetMessageStreams()
				for {
					s, ok, err := it.Next()
					if !ok || err != nil {
						tools <- n
						return
					}
					for {
						m, err := s.Recv()
						if err != nil {
							break
						}
						if m.Role == schema.Tool {
							n++
						}
					}
					s.Close()
				}
			}()
			for {
				if _, err := sr.Recv(); err == io.EOF {
					break
				} else if err != nil {
					measure.Fatal("run: %v", err)
				}
			}
			sr.Close()
			if n := measure.Wait(tools, "the message future"); n != measure.TurnsPerRun-1 {
				measure.Fatal("run: %d tool results", n)
			}
		}
		return measure.CPUTime() - cpu0, time.Since(t0)
	}
	measure.TimeTurns(p, out, "turns", measure.TurnsPerRun, batch)
}

// abort runs p.Sessions agents, each with a cancellable context, busy
// streaming one character every 5 ms or running sleep_stubborn, then
// cancels them all, each from its own goroutine. Each sample is the time
// from just before a cancel to the agent's reader (its own goroutine)
// seeing the first error — from the message stream or an event
// (abort_seen) — and the event iterator ending (abort_ended). The first
// of its rounds is reported apart (measure.AbortRounds).
func abort(p *measure.Params, out *measure.Output) {
	cas := fmt.Sprintf("sessions=%d tool=%s", p.Sessions, p.Tool)
	for round := range measure.AbortRounds(p) {
		n := p.Sessions
		base := time.Now()
		sent := make([]atomic.Int64, n)
		seen := make([]time.Duration, n)
		ended := make([]time.Duration, n)
		ready, done := make(chan struct{}, n), make(chan struct{}, n)
		cancels := make([]context.CancelFunc, n)
		for i := range n {
			var once sync.Once
			busy := func() { once.Do(func() { ready <- struct{}{} }) }
			var r *adk.Runner
			if p.Tool == "stubborn" {
				r = newRunner([]turn{
					{ToolCalls: []call{{Name: "sleep_stubborn", Args: fmt.Sprintf(`{"ms":%d}`, p.ToolMS)}}},
					{Text: "done"},
				}, stubbornTool(busy))
			} else {
				r = newRunner([]turn{{Text: strings.Repeat("a", 100_000), ChunkSize: 1, ChunkDelayMS: 5}})
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancels[i] = cancel
			iter := r.Query(ctx, "go")
			go func() {
				since := func() time.Duration { return time.Since(base) - time.Duration(sent[i].Load()) }
				for {
					ev, ok := iter.Next()
					if !ok {
						ended[i] = since()
						done <- struct{}{}
						return
					}
					if ev.Err != nil && seen[i] == 0 {
						seen[i] = since()
					}
					if ev.Output == nil || ev.Output.MessageOutput == nil || !ev.Output.MessageOutput.IsStreaming {
						continue
					}
					s := ev.Output.MessageOutput.MessageStream
					for {
						_, err := s.Recv()
						if err == io.EOF {
							break
						}
						if err != nil {
							if seen[i] == 0 {
								seen[i] = since()
							}
							break
						}
						busy()
					}
					s.Close()
				}
			}()
		}
		for range n {
			measure.Wait(ready, "agents to be busy")
		}
		time.Sleep(20 * time.Millisecond)
		start := make(chan struct{})
		for i := range n {
			go func() {
				<-start
				sent[i].Store(int64(time.Since(base)))
				cancels[i]()
			}()
		}
		close(start)
		for range n {
			measure.Wait(done, "the event iterators to end")
		}
		for i := range n {
			if seen[i] <= 0 {
				measure.Fatal("agent %d ended without an error", i)
			}
		}
		out.Samples("abort", cas, measure.AbortMetric("abort_seen", round), "us", measure.Micros(seen))
		out.Samples("abort", cas, measure.AbortMetric("abort_ended", round), "us", measure.Micros(ended))
	}
}

// idle makes p.Agents agents (a ChatModelAgent on its own scripted model
// with the shared echo tool, and its Runner) and reports the live heap and the
// RSS they added, per agent.
func idle(p *measure.Params, out *measure.Output) {
	script, echo := echoTurns(), echoTool()
	warm := newRunner(script, echo)
	heap0, rss0 := measure.LiveHeap(), measure.RSS()
	t0 := time.Now()
	runners := make([]*adk.Runner, p.Agents)
	for i := range runners {
		runners[i] = newRunner(script, echo)
	}
	create := time.Since(t0)
	heap1, rss1 := measure.LiveHeap(), measure.RSS()
	measure.HeapProfile(p)
	runtime.KeepAlive(runners)
	runtime.KeepAlive(warm)
	n := float64(p.Agents)
	cas := fmt.Sprintf("agents=%d", p.Agents)
	out.Value("idle", cas, "heap_per_agent", "B", (float64(heap1)-float64(heap0))/n)
	out.Value("idle", cas, "rss_per_agent", "B", (float64(rss1)-float64(rss0))/n)
	out.Value("idle", cas, "create_per_agent", "ns", float64(create.Nanoseconds())/n)
}

// throughput streams p.Chunks one-character chunks with no delay; the
// run's reader copies the assistant message stream (StreamReader.Copy) to
// p.Subscribers readers, each on its own goroutine, and the figure is the
// chunks they received per second, summed, from Query to the last reader
// done.
func throughput(p *measure.Params, out *measure.Output) {
	r := newRunner([]turn{{Text: strings.Repeat("x", p.Chunks), ChunkSize: 1}})
	var received atomic.Int64
	var wg sync.WaitGroup
	t0 := time.Now()
	iter := r.Query(context.Background(), "stream")
	for {
		ev, ok := iter.Next()
		if !ok {
			break
		}
		if ev.Err != nil {
			measure.Fatal("run: %v", ev.Err)
		}
		if ev.Output == nil || ev.Output.MessageOutput == nil || !ev.Output.MessageOutput.IsStreaming {
			continue
		}
		for _, s := range ev.Output.MessageOutput.MessageStream.Copy(p.Subscribers) {
			wg.Go(func() {
				defer s.Close()
				var n int64
				for {
					m, err := s.Recv()
					if errors.Is(err, io.EOF) {
						received.Add(n)
						return
					}
					if err != nil {
						measure.Fatal("stream: %v", err)
					}
					if m.Content != "" {
						n++
					}
				}
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(t0)
	cas := fmt.Sprintf("subscribers=%d", p.Subscribers)
	out.Value("throughput", cas, "events_per_s", "1/s", float64(received.Load())/elapsed.Seconds())
	out.Value("throughput", cas, "lost", "events", 0)
}
