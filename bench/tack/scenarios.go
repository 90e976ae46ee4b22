package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tack-run/tack"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/store/sqlite"

	"github.com/tack-run/tack/bench/internal/measure"
)

// echoTurns is the turn-overhead script: measure.TurnsPerRun-1 echo calls,
// then text.
func echoTurns() []turn {
	var ts []turn
	for range measure.TurnsPerRun - 1 {
		ts = append(ts, turn{ToolCalls: []call{{Name: "echo", Args: map[string]any{"text": "ping"}}}})
	}
	return append(ts, turn{Text: "done"})
}

// turns times runs of measure.TurnsPerRun turns, one fresh session each
// (spawned and subscribed before the clock starts), prompt to agent_end.
func turns(p *measure.Params, out *measure.Output) {
	rt := newRuntime(newModels(map[string][]turn{"turns": echoTurns()}))
	defer rt.Close()
	batch := func(n int) (cpu, wall time.Duration) {
		sessions := make([]*tack.Session, n)
		subs := make([]*tack.Subscription, n)
		for i := range n {
			sessions[i] = spawn(rt, "bench:turns", "echo")
			subs[i] = subscribe(sessions[i], 0)
		}
		cpu0, t0 := measure.CPUTime(), time.Now()
		for i := range n {
			prompt(sessions[i], "go")
			tools := 0
			end := until(subs[i].C, func(ev *eventsv1.Event) bool {
				if ev.GetToolExecutionEnd() != nil {
					tools++
				}
				return ev.GetAgentEnd() != nil
			})
			if r := end.GetAgentEnd().GetReason(); r != "completed" || tools != measure.TurnsPerRun-1 {
				measure.Fatal("run ended %s after %d tool calls", r, tools)
			}
		}
		wall, cpu = time.Since(t0), measure.CPUTime()-cpu0
		for _, s := range sessions {
			s.Close()
		}
		return cpu, wall
	}
	measure.TimeTurns(p, out, "turns", measure.TurnsPerRun, batch)
}

// abort makes p.Sessions sessions busy — streaming one character every
// 5 ms, or running sleep_stubborn — then aborts them all, each from a
// goroutine of its own, released at once. Each sample is the time from just
// before a session's Abort call to its subscriber (its own goroutine)
// receiving agent_abort (abort_seen) and agent_end (abort_ended). The
// first of its rounds is reported apart (measure.AbortRounds).
func abort(p *measure.Params, out *measure.Output) {
	rt := newRuntime(newModels(map[string][]turn{
		"none":     {{Text: strings.Repeat("a", 100_000), ChunkSize: 1, ChunkDelayMS: 5}},
		"stubborn": {{ToolCalls: []call{{Name: "sleep_stubborn", Args: map[string]any{"ms": p.ToolMS}}}}, {Text: "done"}},
	}))
	defer rt.Close()
	busy := func(ev *eventsv1.Event) bool { return ev.GetMessageDelta() != nil }
	tools := []string(nil)
	if p.Tool == "stubborn" {
		busy = func(ev *eventsv1.Event) bool { return ev.GetToolExecutionStart() != nil }
		tools = []string{"sleep_stubborn"}
	}
	cas := fmt.Sprintf("sessions=%d tool=%s", p.Sessions, p.Tool)
	for round := range measure.AbortRounds(p) {
		n := p.Sessions
		base := time.Now()
		sent := make([]atomic.Int64, n) // ns after base
		seen := make([]time.Duration, n)
		ended := make([]time.Duration, n)
		ready, done := make(chan struct{}, n), make(chan struct{}, n)
		sessions := make([]*tack.Session, n)
		for i := range n {
			sessions[i] = spawn(rt, "bench:"+p.Tool, tools...)
			sub := subscribe(sessions[i], 0)
			go func() {
				isBusy := false
				for ev := range sub.C {
					if !isBusy && busy(ev) {
						isBusy = true
						ready <- struct{}{}
					}
					if ev.GetAgentAbort() != nil {
						seen[i] = time.Since(base) - time.Duration(sent[i].Load())
					}
					if ev.GetAgentEnd() != nil {
						ended[i] = time.Since(base) - time.Duration(sent[i].Load())
						done <- struct{}{}
						return
					}
				}
			}()
		}
		for _, s := range sessions {
			prompt(s, "go")
		}
		for range n {
			measure.Wait(ready, "sessions to be busy")
		}
		time.Sleep(20 * time.Millisecond) // every stream in its rhythm, every tool well started
		go1 := make(chan struct{})
		for i, s := range sessions {
			go func() {
				<-go1
				sent[i].Store(int64(time.Since(base)))
				if err := s.Abort(context.Background(), tack.AbortOptions{}); err != nil {
					measure.Fatal("abort: %v", err)
				}
			}()
		}
		close(go1)
		for range n {
			measure.Wait(done, "agent_end")
		}
		for i := range n {
			if seen[i] <= 0 {
				measure.Fatal("session %d ended without agent_abort", i)
			}
		}
		for _, s := range sessions {
			s.Close()
		}
		out.Samples("abort", cas, measure.AbortMetric("abort_seen", round), "us", measure.Micros(seen))
		out.Samples("abort", cas, measure.AbortMetric("abort_ended", round), "us", measure.Micros(ended))
	}
}

// steer steers a session while its killable sleep tool runs: each sample
// is the time from just before Steer to the model receiving a request that
// holds the steering text. The script answers every request with the same
// tool call; a session takes at most 50 steers, to keep its history short.
func steer(p *measure.Params, out *measure.Output) {
	var want atomic.Pointer[string]
	hit := make(chan time.Time, 1)
	m := newModels(map[string][]turn{
		"steer": {{ToolCalls: []call{{Name: "sleep", Args: map[string]any{"ms": p.ToolMS}}}}},
	})
	m.observe = func(req *llm.Request) {
		w := want.Load()
		if w == nil {
			return
		}
		for _, msg := range req.Messages {
			if msg.GetRole() == llm.RoleUser && msg.GetContent() == *w {
				want.Store(nil)
				hit <- time.Now()
				return
			}
		}
	}
	rt := newRuntime(m)
	defer rt.Close()
	var samples []time.Duration
	var s *tack.Session
	var sub *tack.Subscription
	for i := range p.Steers {
		if i%50 == 0 {
			if s != nil {
				s.Close()
			}
			s = spawn(rt, "bench:steer", "sleep")
			sub = subscribe(s, 0)
			prompt(s, "go")
		}
		until(sub.C, func(ev *eventsv1.Event) bool { return ev.GetToolExecutionStart() != nil })
		time.Sleep(10 * time.Millisecond) // the tool is well under way
		text := fmt.Sprintf("steer %d", i)
		want.Store(&text)
		t0 := time.Now()
		if _, err := s.Steer(context.Background(), text, tack.SteerOptions{}); err != nil {
			measure.Fatal("steer: %v", err)
		}
		samples = append(samples, measure.Wait(hit, "the steered request").Sub(t0))
	}
	s.Close()
	out.Samples("steer", "", "steer_to_request", "us", measure.Micros(samples))
}

// idle spawns p.Agents sessions on the turn-overhead model and its echo
// tool, waits until each has started, and reports the live heap and the
// RSS they added, per session.
//
// With p.Passivate the runtime passivates a session quiet for 200 ms
// (tack.WithPassivateAfter): the second figures are taken once no session
// is loaded any more, each then a row of a SQLite file (p.Store sqlite) or
// a record of the in-memory store a runtime given no store keeps (p.Store
// memory) that its next command restores. Such a runtime makes its
// sessions parked: they are not asked anything, which would start them.
func idle(p *measure.Params, out *measure.Output) {
	var opts []tack.Option
	if p.Passivate {
		opts = append(opts, tack.WithPassivateAfter(200*time.Millisecond))
	}
	if p.Passivate && p.Store == "sqlite" {
		dir, err := os.MkdirTemp("", "tack-bench-")
		if err != nil {
			measure.Fatal("%v", err)
		}
		defer os.RemoveAll(dir)
		st, err := sqlite.Open(context.Background(), filepath.Join(dir, "tack.db"))
		if err != nil {
			measure.Fatal("%v", err)
		}
		defer st.Close()
		opts = append(opts, tack.WithStore(st))
	}
	parks := p.Passivate && p.Store == "memory"
	rt := newRuntime(newModels(map[string][]turn{"turns": echoTurns()}), opts...)
	defer rt.Close()
	ctx := context.Background()
	warm := spawn(rt, "bench:turns", "echo")
	if _, err := warm.State(ctx); err != nil {
		measure.Fatal("state: %v", err)
	}
	heap0, rss0 := measure.LiveHeap(), measure.RSS()
	t0 := time.Now()
	sessions := make([]*tack.Session, p.Agents)
	for i := range sessions {
		sessions[i] = spawn(rt, "bench:turns", "echo")
	}
	create := time.Since(t0)
	// A session has started once it answers (its mailbox runs in order).
	// A runtime that parks (no store) makes its sessions parked: each is
	// its record already, which a command would start.
	if !parks {
		for _, s := range sessions {
			if _, err := s.State(ctx); err != nil {
				measure.Fatal("state: %v", err)
			}
		}
	}
	if p.Passivate {
		for deadline := time.Now().Add(measure.Deadline); len(rt.Sessions()) > 0; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				measure.Fatal("%d sessions still loaded", len(rt.Sessions()))
			}
		}
	}
	heap1, rss1 := measure.LiveHeap(), measure.RSS()
	measure.HeapProfile(p)
	runtime.KeepAlive(sessions)
	n := float64(p.Agents)
	cas := fmt.Sprintf("agents=%d", p.Agents)
	out.Value("idle", cas, "heap_per_agent", "B", (float64(heap1)-float64(heap0))/n)
	out.Value("idle", cas, "rss_per_agent", "B", (float64(rss1)-float64(rss0))/n)
	out.Value("idle", cas, "create_per_agent", "ns", float64(create.Nanoseconds())/n)
	if p.Passivate {
		out.Value("idle", cas, "wake_per_agent", "ns", float64(wake(ctx, sessions).Nanoseconds()))
	} else if len(rt.Sessions()) != p.Agents+1 {
		measure.Fatal("%d sessions live, want %d", len(rt.Sessions()), p.Agents+1)
	}
}

// wakeSample is how many passivated sessions idle wakes, one after the
// other, to time a wake-up.
const wakeSample = 1000

// wake wakes up to wakeSample of the passivated sessions, one at a time,
// with a command that restores each (State), and returns the time one
// took on average.
func wake(ctx context.Context, sessions []*tack.Session) time.Duration {
	n := min(wakeSample, len(sessions))
	t0 := time.Now()
	for _, s := range sessions[:n] {
		if st, err := s.State(ctx); err != nil || st.GetState() != "idle" {
			measure.Fatal("a passivated session does not wake: %v, %v", st, err)
		}
	}
	return time.Since(t0) / time.Duration(n)
}

// throughput streams p.Chunks one-character chunks with no delay to
// p.Subscribers readers (Session.Read: one buffer the readers share, as
// Eino's StreamReader.Copy is), each on its own goroutine and buffered
// for the whole run (so none falls behind and loses events), and reports
// the message_delta events received per second, summed over the readers,
// from the prompt to the last agent_end.
func throughput(p *measure.Params, out *measure.Output) {
	rt := newRuntime(newModels(map[string][]turn{
		"throughput": {{Text: strings.Repeat("x", p.Chunks), ChunkSize: 1}},
	}))
	defer rt.Close()
	s := spawn(rt, "bench:throughput")
	var deltas, lost atomic.Int64
	done := make(chan struct{}, p.Subscribers)
	ctx := context.Background()
	for range p.Subscribers {
		r, err := s.Read(ctx, tack.SubscribeOptions{Buffer: p.Chunks + 1024})
		if err != nil {
			measure.Fatal("read: %v", err)
		}
		go func() {
			defer r.Close()
			var n int64
			for {
				ev, err := r.Next(ctx)
				if err != nil {
					measure.Fatal("read: %v", err)
				}
				switch {
				case ev.GetMessageDelta() != nil:
					n++
				case ev.GetEventsLost() != nil:
					lost.Add(int64(ev.GetEventsLost().GetTo() - ev.GetEventsLost().GetFrom() + 1))
				case ev.GetAgentEnd() != nil:
					deltas.Add(n)
					done <- struct{}{}
					return
				}
			}
		}()
	}
	t0 := time.Now()
	prompt(s, "stream")
	for range p.Subscribers {
		measure.Wait(done, "agent_end")
	}
	elapsed := time.Since(t0)
	cas := fmt.Sprintf("subscribers=%d", p.Subscribers)
	out.Value("throughput", cas, "events_per_s", "1/s", float64(deltas.Load())/elapsed.Seconds())
	out.Value("throughput", cas, "lost", "events", float64(lost.Load()))
}
