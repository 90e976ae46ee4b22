package actors

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
)

var (
	propSeeds = flag.Int("tack.seeds", 1000, "number of seeds TestPropertyRandomCommands plays")
	propSeed  = flag.Int64("tack.seed", -1, "play only this seed of TestPropertyRandomCommands (to reproduce a failure)")
)

// propWorkers is how many seeds play at once, each in its own session of
// one actor system: the seeds wait on timers far more than they compute.
const propWorkers = 48

// TestPropertyRandomCommands plays random sequences of prompt, steer,
// abort, switch_model and compact, at random moments, against random
// scripts that mix chunked text, thinking, tool calls (echo, sleep,
// sleep_immune, sleep_stubborn, unknown tools, bad arguments) and model
// errors; on some seeds the model has a small window (its usage makes
// compact_at_percent trigger) or refuses what does not fit as a context
// overflow (which compacts and retries). Whenever
// the session is idle (at random points, and once it has settled at the
// end) it checks:
//
//   - the history passes llm.Validate, and no request needed repair;
//   - every accepted prompt or steering message is exactly once either in
//     the history (get_messages with all: compaction keeps what it
//     replaces), in a queue (get_state) or reported dropped, and no
//     refused one is anywhere;
//   - get_messages with all holds, summaries aside, every message that
//     message_committed told, in order, and ends with the working history;
//   - every abort produced exactly one agent_abort;
//   - every run that started ended with exactly one agent_end, and runs
//     did not overlap; seq numbers are 1..N; no internal error;
//   - the session answers get_state (every command and check asks it);
//   - every request sent (the session has random context limits on two
//     seeds in three) is valid for the provider, carries the system prompt,
//     keeps to the limits unless the cut moved back to keep a call with
//     its results, and request_start.message_count counts its messages;
//     every summary request carries the summarisation prompt and one
//     user message.
//
// A seed fixes the script and the commands; the interleaving with the
// model and the tools also depends on the scheduler, so a failing seed is
// a strong hint, not always an exact replay: run it with -tack.seed=N
// -count=50.
func TestPropertyRandomCommands(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	env := &Env{Settings: Settings{ToolGrace: 10 * time.Millisecond}, Logger: zap.New(core)}
	sys := newSystem(t)
	reg := newPlace(sys, env, nil)
	set := demoSet(t)

	var seeds []uint64
	if *propSeed >= 0 {
		seeds = []uint64{uint64(*propSeed)}
	} else {
		for s := range *propSeeds {
			seeds = append(seeds, uint64(s))
		}
	}
	next := make(chan uint64)
	var wg sync.WaitGroup
	for range min(propWorkers, len(seeds)) {
		// t.Run may be called from several goroutines at once; each seed is
		// a subtest of its own, so t.Fatal works in it and its name is the
		// seed.
		wg.Go(func() {
			for seed := range next {
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					newProp(t, sys, reg, set, seed).play()
				})
			}
		})
	}
	for _, s := range seeds {
		next <- s
	}
	close(next)
	wg.Wait()
	for _, e := range logs.All() {
		t.Errorf("the runtime logged %s: %q %v", e.Level, e.Message, e.ContextMap())
	}
}

// prop is one seed's session and what the test knows it asked for.
type prop struct {
	t    *testing.T
	h    *harness
	rng  *rand.Rand
	seed uint64
	kick chan struct{} // a token after each event, for waits

	limits *llm.ContextConfig // nil on a third of the seeds
	window int64              // the scripts' context_window, 0 for none
	refuse int64              // tokens past which the model refuses a request as an overflow, 0 for never
	sent   *sentRequests
	all    bool // queue_mode all, on a third of the seeds

	accepted []string // texts of accepted prompts and steering messages
	refused  []string // texts of steering messages refused as queue_full
	aborts   int
	// interrupts counts prompts with if_busy interrupt or rollback: each
	// aborts the run, if one was in progress.
	interrupts int
	// steersFull counts steers (and prompts with if_busy steer) refused
	// as queue_full: each is told by steering_received rejected_full.
	steersFull int
	models     int
	trace      []string // what the test did, for a failure's report
}

func newProp(t *testing.T, sys *actor.ActorSystem, reg *testPlace, set *tools.Set, seed uint64) *prop {
	t.Helper()
	p := &prop{t: t, rng: rand.New(rand.NewPCG(seed, 0x7ac4)), seed: seed, kick: make(chan struct{}, 1), sent: &sentRequests{}}
	if p.rng.IntN(3) > 0 {
		p.limits = &llm.ContextConfig{MaxMessages: p.rng.IntN(8), MaxTokens: int64(p.rng.IntN(3) * (5 + p.rng.IntN(40)))}
		if p.rng.IntN(2) == 0 {
			p.limits.CompactAtPercent = float64(20 + p.rng.IntN(70))
		}
		if p.rng.IntN(3) > 0 {
			p.limits.KeepRecent = new(p.rng.IntN(7))
		}
	}
	if p.rng.IntN(2) == 0 {
		p.window = int64(40 + p.rng.IntN(200))
	}
	if p.rng.IntN(2) == 0 {
		p.refuse = int64(20 + p.rng.IntN(60))
	}
	p.all = p.rng.IntN(3) == 0
	mode := events.QueueOneAtATime
	if p.all {
		mode = events.QueueAll
	}
	p.h = spawnSpec(t, sys, reg, Spec{ID: fmt.Sprintf("prop-%d", seed), Model: p.model("script:m0"), System: "be brief", Tools: set,
		Context: p.limits, QueueMode: mode})
	p.h.ok(&SubscribeSink{Sink: kicker(p.kick)})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d did: %s", seed, strings.Join(p.trace, ", "))
			t.Logf("events: %q", p.h.rec.Types())
			t.Logf("reproduce: go test ./actors -race -run 'TestPropertyRandomCommands' -tack.seed=%d -count=50", seed)
		}
	})
	return p
}

// kicker puts a token in its channel after each event, never blocking.
type kicker chan struct{}

func (k kicker) Deliver(*eventsv1.Event) {
	select {
	case k <- struct{}{}:
	default:
	}
}

func (p *prop) play() {
	steps := 4 + p.rng.IntN(9)
	for i := range steps {
		switch r := p.rng.IntN(100); {
		case r < 28:
			p.prompt(fmt.Sprintf("p%d", i))
		case r < 50:
			p.steer(fmt.Sprintf("s%d", i))
		case r < 68:
			p.abort()
		case r < 78:
			p.switchModel()
		case r < 88:
			p.compact()
		default:
			p.checkIfIdle()
		}
		p.pause()
		if p.rng.IntN(4) == 0 {
			p.checkIfIdle()
		}
	}
	p.settle()
	p.check(p.compacted(p.h.state()))
}

func (p *prop) prompt(text string) {
	ifBusy := []events.IfBusy{"", events.IfBusyQueue, events.IfBusySteer, events.IfBusyReject, events.IfBusyInterrupt, events.IfBusyRollback}[p.rng.IntN(6)]
	r := p.h.send(&eventsv1.Prompt{Text: text, IfBusy: string(ifBusy)})
	switch code := r.GetError().GetCode(); {
	case code == "":
		p.accepted = append(p.accepted, text)
	case code == events.CodeBusy && ifBusy == events.IfBusyReject:
		p.refused = append(p.refused, text)
	case code == events.CodeQueueFull && ifBusy == events.IfBusySteer:
		p.refused = append(p.refused, text)
		p.steersFull++
	default:
		p.t.Fatalf("prompt %s if_busy %q: %v", text, ifBusy, r.Error)
	}
	if ifBusy == events.IfBusyInterrupt || ifBusy == events.IfBusyRollback {
		p.interrupts++
	}
	p.trace = append(p.trace, fmt.Sprintf("prompt %s if_busy=%q (queued %v, error %q)", text, ifBusy, r.GetPrompt().GetQueued(), r.GetError().GetCode()))
}

func (p *prop) steer(text string) {
	cmd := &eventsv1.Steer{Text: text}
	interrupt := "default"
	switch p.rng.IntN(3) {
	case 1:
		cmd.InterruptTools, interrupt = new(bool), "false"
	case 2:
		yes := true
		cmd.InterruptTools, interrupt = &yes, "true"
	}
	r := p.h.send(cmd)
	switch code := r.GetError().GetCode(); code {
	case "":
		p.accepted = append(p.accepted, text)
		p.trace = append(p.trace, fmt.Sprintf("steer %s interrupt_tools=%s (%s)", text, interrupt, r.GetSteer().GetRef()))
	case events.CodeQueueFull:
		p.refused = append(p.refused, text)
		p.steersFull++
		p.trace = append(p.trace, fmt.Sprintf("steer %s refused", text))
	default:
		p.t.Fatalf("steer %s: %v", text, r.Error)
	}
}

func (p *prop) abort() {
	cmd := &eventsv1.Abort{
		KillTools:  []string{"", string(events.KillKillable), string(events.KillAll), string(events.KillNone)}[p.rng.IntN(4)],
		ClearQueue: p.rng.IntN(2) == 0,
		At:         []string{"", string(events.AtNow), string(events.AtAfterResponse), string(events.AtAfterTools)}[p.rng.IntN(4)],
		TimeoutMs:  []int64{0, 0, 5, 30}[p.rng.IntN(4)],
		Rollback:   p.rng.IntN(4) == 0,
	}
	before := len(findAll(p.h.rec.Events(), "agent_abort"))
	if r := p.h.send(cmd); r.Error != nil {
		p.t.Fatalf("abort: %v", r.Error)
	}
	p.aborts++
	// Told at once whatever at says: agent_abort is published before the
	// answer goes out (and never waits for a write), so it is recorded by
	// the time the answer is here.
	if n := len(findAll(p.h.rec.Events(), "agent_abort")); n <= before {
		p.t.Errorf("the abort at=%q was answered before agent_abort was told", cmd.At)
	}
	p.trace = append(p.trace, fmt.Sprintf("abort kill_tools=%q clear_queue=%v at=%q timeout_ms=%d rollback=%v",
		cmd.KillTools, cmd.ClearQueue, cmd.At, cmd.TimeoutMs, cmd.Rollback))
}

func (p *prop) switchModel() {
	p.models++
	name := fmt.Sprintf("script:m%d", p.models)
	m := p.model(name)
	if r := p.h.send(&SwitchModel{Model: m}); r.Error != nil {
		p.t.Fatalf("switch_model: %v", r.Error)
	}
	p.trace = append(p.trace, "switch_model "+name)
}

func (p *prop) compact() {
	if r := p.h.send(&eventsv1.Compact{}); r.Error != nil {
		p.t.Fatalf("compact: %v", r.Error)
	}
	p.trace = append(p.trace, "compact")
}

// pause lets time pass, or not: nothing, until the next event (at most
// 20 ms), or a timer of up to 20 ms.
func (p *prop) pause() {
	switch p.rng.IntN(3) {
	case 0:
	case 1:
		n := p.h.rec.Len()
		timer := time.NewTimer(20 * time.Millisecond)
		defer timer.Stop()
		for p.h.rec.Len() == n {
			select {
			case <-p.kick:
			case <-timer.C:
				return
			}
		}
	case 2:
		timer := time.NewTimer(time.Duration(p.rng.IntN(21)) * time.Millisecond)
		defer timer.Stop()
		<-timer.C
	}
}

// checkIfIdle checks the invariants if the session is idle.
func (p *prop) checkIfIdle() {
	if st := p.h.state(); st.State == "idle" {
		p.check(p.compacted(st))
	}
}

// compacted waits, when the session is idle with a compaction under way
// (the compact command in idle, or compact_at_percent at a run's end),
// for that compaction to end, which is the one change an idle session
// makes without a command; it returns get_state after it.
func (p *prop) compacted(st *eventsv1.SessionState) *eventsv1.SessionState {
	evs := p.h.rec.Events()
	starts, ends := len(findAll(evs, "compact_start")), len(findAll(evs, "compact_end"))
	if st.State != "idle" || starts == ends {
		return st
	}
	p.h.waitFor("compact_end", starts)
	return p.h.state()
}

// settle waits, run by run, until the session is idle. Ends are counted
// before get_state: if it says busy, the run's end is still to come.
func (p *prop) settle() {
	for {
		ends := len(findAll(p.h.rec.Events(), "agent_end"))
		if p.h.state().State == "idle" {
			return
		}
		p.h.waitFor("agent_end", ends+1)
	}
}

// check asserts the invariants of an idle session whose get_state is st.
// Idle, the session changes only on a command, so st, the history and the
// events agree.
func (p *prop) check(st *eventsv1.SessionState) {
	p.t.Helper()
	if st.State != "idle" || st.RunId != nil || len(st.RunningTools) != 0 {
		p.t.Fatalf("not idle: %v", st)
	}
	msgs := p.h.ok(&eventsv1.GetMessages{}).GetMessages().GetMessages()
	if err := llm.Validate(msgs); err != nil {
		p.t.Fatalf("history: %v", err)
	}
	all := p.h.ok(&eventsv1.GetMessages{All: true}).GetMessages().GetMessages()
	evs := p.h.rec.Events()
	for _, problem := range logProblems(evs) {
		p.t.Error(problem)
	}
	checkAll(p.t, p.h, evs)

	// Nothing lost: each accepted text is in exactly one place, once.
	where := map[string][]string{}
	for _, m := range all {
		place := "history"
		if m.RolledBack {
			place = "rolled_back"
		}
		texts := []string{m.Content}
		if p.all {
			texts = strings.Split(m.Content, QueueJoin)
		}
		for _, text := range texts {
			if m.Role == llm.RoleUser && !m.Summary {
				where[text] = append(where[text], place)
			}
		}
	}
	if rolled := len(all) - len(msgs); rolled < 0 {
		p.t.Errorf("get_messages all has %d messages, the history %d", len(all), len(msgs))
	}
	for _, q := range st.PromptQueue {
		where[q] = append(where[q], "prompt_queue")
	}
	for _, s := range st.SteeringQueue {
		where[s.Text] = append(where[s.Text], "steering_queue")
	}
	rejectedFull := 0
	for _, ev := range evs {
		if d := ev.GetPromptDropped(); d != nil {
			where[d.Text] = append(where[d.Text], "prompt_dropped")
		}
		if d := ev.GetSteeringDropped(); d != nil {
			where[d.Text] = append(where[d.Text], "steering_dropped")
		}
		if r := ev.GetSteeringReceived(); r != nil && r.Status == "rejected_full" {
			rejectedFull++
		}
	}
	for _, text := range p.accepted {
		if len(where[text]) != 1 {
			p.t.Errorf("accepted %q is found %d times: %q", text, len(where[text]), where[text])
		}
		delete(where, text)
	}
	for _, text := range p.refused {
		if len(where[text]) != 0 {
			p.t.Errorf("refused %q is found: %q", text, where[text])
		}
	}
	for text, places := range where {
		p.t.Errorf("%q was never accepted but is found: %q", text, places)
	}
	if rejectedFull != p.steersFull {
		p.t.Errorf("%d steering_received rejected_full for %d refused steers", rejectedFull, p.steersFull)
	}

	p.checkRequests(evs)
	// Each abort tells once; a prompt with if_busy interrupt or rollback
	// tells once when a run was in progress (the test cannot know whether
	// one was).
	if n := len(findAll(evs, "agent_abort")); n < p.aborts || n > p.aborts+p.interrupts {
		p.t.Errorf("%d agent_abort events for %d aborts and %d prompts that may interrupt a run", n, p.aborts, p.interrupts)
	}
	ended := map[string]int{}
	for _, ev := range findAll(evs, "agent_end") {
		ended[ev.GetAgentEnd().RunId]++
	}
	for _, ev := range findAll(evs, "agent_start") {
		if id := ev.GetAgentStart().RunId; ended[id] != 1 {
			p.t.Errorf("run %s ended %d times", id, ended[id])
		}
	}
	if p.t.Failed() {
		p.t.FailNow()
	}
}

// randomScript returns a script of one to five random turns and a last
// plain answer, which repeats: every run ends.
func randomScript(rng *rand.Rand) string {
	var turns []string
	for range 1 + rng.IntN(5) {
		turns = append(turns, randomTurn(rng))
	}
	turns = append(turns, `{"text":"done","chunk_size":2,"chunk_delay_ms":1}`)
	return `{"turns":[` + strings.Join(turns, ",") + `]}`
}

func randomTurn(rng *rand.Rand) string {
	t := map[string]any{}
	if rng.IntN(3) == 0 {
		t["delay_ms"] = rng.IntN(10)
	}
	text := func() {
		t["text"] = strings.Repeat("word ", 1+rng.IntN(6))
		t["chunk_size"] = 1 + rng.IntN(8)
		t["chunk_delay_ms"] = rng.IntN(3)
	}
	switch rng.IntN(7) {
	case 0:
		text()
	case 1:
		t["thinking"] = "let me think"
		text()
	case 2, 3, 4:
		if rng.IntN(2) == 0 {
			text()
		}
		var calls []map[string]any
		for range 1 + rng.IntN(3) {
			calls = append(calls, randomCall(rng))
		}
		t["tool_calls"] = calls
	case 5:
		t["error"] = map[string]any{"status": 500, "message": "boom"}
	case 6:
		text()
		t["error"] = map[string]any{"status": 503, "message": "overloaded"}
	}
	b, err := json.Marshal(t)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func randomCall(rng *rand.Rand) map[string]any {
	ms := rng.IntN(21)
	switch rng.IntN(10) {
	case 0, 1:
		return map[string]any{"name": "echo", "args": map[string]any{"text": "echoed"}}
	case 2, 3:
		return map[string]any{"name": "sleep", "args": map[string]any{"ms": ms}}
	case 4, 5:
		return map[string]any{"name": "sleep_immune", "args": map[string]any{"ms": ms}}
	case 6, 7:
		return map[string]any{"name": "sleep_stubborn", "args": map[string]any{"ms": ms}}
	case 8:
		return map[string]any{"name": "teleport"}
	default:
		return map[string]any{"name": "sleep", "args": map[string]any{"ms": "soon"}}
	}
}

// model is a random script named name whose requests p checks, with the
// seed's window, refusing as an overflow what passes p.refuse.
func (p *prop) model(name string) *llm.Model {
	script := randomScript(p.rng)
	if p.window > 0 {
		script = fmt.Sprintf(`{"context_window":%d,`, p.window) + script[1:]
	}
	m := scriptModel(p.t, name, script)
	if p.refuse > 0 {
		m.Provider = windowOf(p.refuse)(m.Provider)
	}
	m.Provider = &checkedProvider{Provider: m.Provider, sent: p.sent}
	return m
}

// sentRequests are the requests a session's models were sent, in order.
type sentRequests struct {
	mu   sync.Mutex
	reqs []*llm.Request
}

// checkedProvider records each request before its provider streams it.
type checkedProvider struct {
	llm.Provider
	sent *sentRequests
}

func (c *checkedProvider) Stream(ctx context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
	c.sent.mu.Lock()
	c.sent.reqs = append(c.sent.reqs, req)
	c.sent.mu.Unlock()
	return c.Provider.Stream(ctx, req, emit)
}

// checkRequests checks every request sent so far against the history
// invariant, the system prompt, the limits and request_start.
func (p *prop) checkRequests(evs []*eventsv1.Event) {
	p.t.Helper()
	starts := findAll(evs, "request_start")
	// A run aborted just after request_start ends without waiting for its
	// stream goroutine, which may not have called the provider yet: it
	// will, with a cancelled context. Summary requests have no
	// request_start; their compactions are over (compacted).
	reqs := eventually.Value(p.t, 5*time.Second, func() ([]*llm.Request, error) {
		p.sent.mu.Lock()
		reqs := slices.Clone(p.sent.reqs)
		p.sent.mu.Unlock()
		reqs = slices.DeleteFunc(reqs, func(r *llm.Request) bool {
			if r.System != SummarisePrompt {
				return false
			}
			if len(r.Messages) != 1 || r.Messages[0].Role != llm.RoleUser || r.Messages[0].Content == "" {
				p.t.Errorf("a summary request with messages %q", contents(r.Messages))
			}
			return true
		})
		if len(reqs) < len(starts) {
			return nil, fmt.Errorf("%d request_start events for %d requests", len(starts), len(reqs))
		}
		return reqs, nil
	})
	if len(starts) != len(reqs) {
		p.t.Fatalf("%d request_start events for %d requests", len(starts), len(reqs))
	}
	// request_start tells how many messages each request carries. A
	// request whose run was aborted at once may reach the provider after
	// the next one, so the counts are compared as multisets.
	told, sent := make([]int, len(starts)), make([]int, len(reqs))
	for i := range starts {
		told[i], sent[i] = int(starts[i].GetRequestStart().MessageCount), len(reqs[i].Messages)
	}
	slices.Sort(told)
	slices.Sort(sent)
	if !slices.Equal(told, sent) {
		p.t.Errorf("request_start message counts %v, requests sent with %v messages", told, sent)
	}
	for i, req := range reqs {
		if err := llm.Validate(req.Messages); err != nil {
			p.t.Errorf("request %d is not valid: %v", i+1, err)
		}
		if req.System != "be brief" || len(req.Messages) == 0 {
			p.t.Errorf("request %d: system %q, %d messages", i+1, req.System, len(req.Messages))
		}
		if p.limits == nil {
			continue
		}
		movedBack := len(req.Messages) > 1 && req.Messages[1].Role == llm.RoleTool
		var tokens int64
		for _, m := range req.Messages {
			tokens += llm.EstimateMessageTokens(m)
		}
		budget := p.limits.MaxTokens // the script reports no usage: no scaling
		if budget > 0 {
			budget = max(budget-llm.EstimateTokens("be brief"), 1)
		}
		if !movedBack && len(req.Messages) > 1 &&
			((p.limits.MaxMessages > 0 && len(req.Messages) > p.limits.MaxMessages) || (budget > 0 && tokens > budget)) {
			p.t.Errorf("request %d: %d messages, %d tokens over the limits %+v", i+1, len(req.Messages), tokens, p.limits)
		}
	}
}
