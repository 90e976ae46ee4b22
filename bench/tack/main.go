package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/config"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/script"
	"github.com/tack-run/tack/store/sqlite"

	"github.com/tack-run/tack/bench/internal/measure"
	"github.com/tack-run/tack/bench/internal/openaisrv"
)

func main() {
	p := measure.Flags(flag.CommandLine)
	flag.Parse()
	name := "tack"
	if p.Passivate {
		if p.Scenario != "idle" {
			measure.Fatal("--passivate is for the idle scenario")
		}
		name = "tack-passivated"
	}
	out := measure.NewOutput(name, p)
	version := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/tack-run/tack" {
				version = d.Version
			}
		}
	}
	out.Meta(version)
	defer measure.Profile(p)()
	switch p.Scenario {
	case "turns":
		turns(p, out)
	case "http-turns":
		httpTurns(p, out)
	case "abort":
		abort(p, out)
	case "steer":
		steer(p, out)
	case "idle":
		idle(p, out)
	case "throughput":
		throughput(p, out)
	default:
		measure.Fatal("unknown scenario %q", p.Scenario)
	}
}

// turn is one turn of a scripted model (docs/protocol.md#the-scripted-model).
type turn struct {
	Text         string `json:"text,omitempty"`
	ChunkSize    int    `json:"chunk_size,omitempty"`
	ChunkDelayMS int    `json:"chunk_delay_ms,omitempty"`
	ToolCalls    []call `json:"tool_calls,omitempty"`
	Usage        usage  `json:"usage"`
}

type call struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

type usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// fixedUsage is what every scripted turn of every runtime reports.
var fixedUsage = usage{InputTokens: 10, OutputTokens: 5}

// models resolves "bench:<name>" to a scripted model playing a script
// parsed once; observe, when set, sees every request first.
type models struct {
	scripts map[string]*script.Script
	observe func(*llm.Request)
}

func newModels(named map[string][]turn) *models {
	m := &models{scripts: map[string]*script.Script{}}
	for name, turns := range named {
		for i := range turns {
			turns[i].Usage = fixedUsage
		}
		data, err := json.Marshal(map[string]any{"turns": turns, "when_exhausted": "repeat_last"})
		if err != nil {
			measure.Fatal("%v", err)
		}
		s, err := script.Parse(data)
		if err != nil {
			measure.Fatal("script %s: %v", name, err)
		}
		m.scripts["bench:"+name] = s
	}
	return m
}

// Resolve implements llm.Resolver.
func (m *models) Resolve(name string, _ json.RawMessage) (*llm.Model, error) {
	s, ok := m.scripts[name]
	if !ok {
		return nil, &llm.UnknownModelError{Name: name}
	}
	var prov llm.Provider = script.New(s)
	if m.observe != nil {
		prov = observed{prov, m.observe}
	}
	return &llm.Model{Name: name, ID: name, Provider: prov}, nil
}

// observed calls see with each request before the provider streams it.
type observed struct {
	llm.Provider
	see func(*llm.Request)
}

func (o observed) Stream(ctx context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
	o.see(req)
	return o.Provider.Stream(ctx, req, emit)
}

func newRuntime(m *models, opts ...tack.Option) *tack.Runtime {
	rt, err := tack.New(append([]tack.Option{tack.WithModels(m)}, opts...)...)
	if err != nil {
		measure.Fatal("%v", err)
	}
	return rt
}

func spawn(rt *tack.Runtime, model string, tools ...string) *tack.Session {
	s, err := rt.Spawn(tack.SessionConfig{Model: model, Tools: tools})
	if err != nil {
		measure.Fatal("spawn: %v", err)
	}
	return s
}

func subscribe(s *tack.Session, buffer int) *tack.Subscription {
	sub, err := s.Subscribe(context.Background(), tack.SubscribeOptions{Buffer: buffer})
	if err != nil {
		measure.Fatal("subscribe: %v", err)
	}
	return sub
}

func prompt(s *tack.Session, text string) {
	if _, err := s.Prompt(context.Background(), text); err != nil {
		measure.Fatal("prompt: %v", err)
	}
}

// until reads c until match accepts an event, failing after
// measure.Deadline.
func until(c <-chan *eventsv1.Event, match func(*eventsv1.Event) bool) *eventsv1.Event {
	t := time.NewTimer(measure.Deadline)
	defer t.Stop()
	for {
		select {
		case ev, ok := <-c:
			if !ok {
				measure.Fatal("subscription closed")
			}
			if match(ev) {
				return ev
			}
		case <-t.C:
			measure.Fatal("timed out waiting for an event")
		}
	}
}

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

// httpTurns times runs of one turn each — the prompt, one reply streamed
// by the OpenAI-compatible server at p.BaseURL, agent_end — one fresh
// session each (spawned and subscribed before the clock starts). The model
// comes from a configuration naming the server as a provider, as a user's
// tack.json would, so the request goes through llm/openai and openai-go.
// Each run must end completed with the server's reply and usage.
func httpTurns(p *measure.Params, out *measure.Output) {
	if p.BaseURL == "" {
		measure.Fatal("http-turns needs --base-url")
	}
	cfg, err := config.Parse(fmt.Appendf(nil, `{"providers": {"bench": {"base_url": %q, "models": ["bench"]}}}`, p.BaseURL))
	if err != nil {
		measure.Fatal("config: %v", err)
	}
	rt, err := tack.New(tack.WithModels(config.NewResolver(cfg)))
	if err != nil {
		measure.Fatal("%v", err)
	}
	defer rt.Close()
	batch := func(n int) (cpu, wall time.Duration) {
		sessions := make([]*tack.Session, n)
		subs := make([]*tack.Subscription, n)
		for i := range n {
			sessions[i] = spawn(rt, "bench/bench")
			subs[i] = subscribe(sessions[i], 0)
		}
		cpu0, t0 := measure.CPUTime(), time.Now()
		for i := range n {
			prompt(sessions[i], "go")
			var reply *eventsv1.ResponseComplete
			end := until(subs[i].C, func(ev *eventsv1.Event) bool {
				if rc := ev.GetResponseComplete(); rc != nil {
					reply = rc
				}
				return ev.GetAgentEnd() != nil
			})
			if r := end.GetAgentEnd().GetReason(); r != "completed" || reply == nil {
				measure.Fatal("run ended %s, response %v", r, reply)
			}
			u := reply.GetUsage()
			if text := reply.GetMessage().GetContent(); text != openaisrv.Reply || u.GetInputTokens() != int64(openaisrv.Usage.PromptTokens) || u.GetOutputTokens() != int64(openaisrv.Usage.CompletionTokens) {
				measure.Fatal("reply %q with usage %v, want %q and the server's", text, u, openaisrv.Reply)
			}
		}
		wall, cpu = time.Since(t0), measure.CPUTime()-cpu0
		for _, s := range sessions {
			s.Close()
		}
		return cpu, wall
	}
	measure.TimeTurns(p, out, "http-turns", 1, batch)
}

// abort makes p.Sessions sessions busy — streaming one character every
// 5 ms, or running sleep_stubborn — then aborts them all, each from a
// goroutine of its own, released at once. Each sample is the time from just
// before a session's Abort call to its subscriber (its own goroutine)
// receiving agent_abort (abort_seen) and agent_end (abort_ended).
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
	for range p.Rounds {
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
		out.Samples("abort", cas, "abort_seen", "us", measure.Micros(seen))
		out.Samples("abort", cas, "abort_ended", "us", measure.Micros(ended))
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
// With p.Passivate the runtime keeps its sessions in a SQLite file and
// passivates a session quiet for 200 ms (tack.WithPassivateAfter): the
// second figures are taken once no session is loaded any more, each then
// a row of the file that its next command restores.
func idle(p *measure.Params, out *measure.Output) {
	var opts []tack.Option
	if p.Passivate {
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
		opts = append(opts, tack.WithStore(st), tack.WithPassivateAfter(200*time.Millisecond))
	}
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
	for _, s := range sessions {
		if _, err := s.State(ctx); err != nil {
			measure.Fatal("state: %v", err)
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
		if st, err := sessions[0].State(ctx); err != nil || st.GetState() != "idle" {
			measure.Fatal("a passivated session does not wake: %v, %v", st, err)
		}
	} else if len(rt.Sessions()) != p.Agents+1 {
		measure.Fatal("%d sessions live, want %d", len(rt.Sessions()), p.Agents+1)
	}
}

// throughput streams p.Chunks one-character chunks with no delay to
// p.Subscribers channel subscribers, each read by its own goroutine and
// buffered for the whole run (so none falls behind and loses events), and
// reports the message_delta events received per second, summed over the
// subscribers, from the prompt to the last agent_end.
func throughput(p *measure.Params, out *measure.Output) {
	rt := newRuntime(newModels(map[string][]turn{
		"throughput": {{Text: strings.Repeat("x", p.Chunks), ChunkSize: 1}},
	}))
	defer rt.Close()
	s := spawn(rt, "bench:throughput")
	var deltas, lost atomic.Int64
	done := make(chan struct{}, p.Subscribers)
	for range p.Subscribers {
		sub := subscribe(s, p.Chunks+1024)
		until(sub.C, func(ev *eventsv1.Event) bool { return ev.GetSessionCreated() != nil })
		go func() {
			var n int64
			for ev := range sub.C {
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
