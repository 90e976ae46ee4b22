package remote_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// BenchmarkRemoteAbortFanout measures the abort bound across the wire: a
// `tack node` process (--store memory, or TACK_BENCH_STORE) and this
// process's actor system on loopback. Each op is one round: it creates
// TACK_BENCH_SESSIONS sessions (default 1,000) on the node, subscribes an
// actor of this process to every event of each (one subscriber per
// session), prompts them all and waits until every one is busy —
// streaming one character every 50 ms (streaming), or running
// sleep_stubborn for 2 s, which ignores cancellation (stubborn) — then
// 20 ms more; then it aborts them all at once, each Abort request sent
// from a goroutine of its own. A sample is the time from just before a
// session's Abort is sent to its subscriber receiving agent_abort;
// "ended" is until agent_end. Samples are pooled over the rounds and
// reported as abort-p50-ms, abort-p99-ms, abort-max-ms and
// ended-p99-ms; ns/op is the whole round, setup included:
//
//	go test -run '^$' -bench RemoteAbortFanout -benchtime 3x ./server/remote
func BenchmarkRemoteAbortFanout(b *testing.B) {
	sessions := 1000
	if v, err := strconv.Atoi(os.Getenv("TACK_BENCH_SESSIONS")); err == nil && v > 0 {
		sessions = v
	}
	store := "memory"
	if v := os.Getenv("TACK_BENCH_STORE"); v != "" {
		store = v
	}
	n := startNode(b, "--store", store, "--passivate-after", "0")
	c := newClient(b, n.Addr)
	rows := []struct {
		name, script string
		busy         func(*eventsv1.Event) bool
	}{
		{"streaming", `{"turns":[{"text":"` + strings.Repeat("a", 100_000) + `","chunk_size":1,"chunk_delay_ms":50}]}`,
			func(ev *eventsv1.Event) bool { return ev.GetMessageDelta() != nil }},
		{"stubborn", `{"turns":[{"tool_calls":[{"name":"sleep_stubborn","args":{"ms":2000}}]},{"text":"done"}]}`,
			func(ev *eventsv1.Event) bool { return ev.GetToolExecutionStart() != nil }},
	}
	round := 0
	for _, row := range rows {
		b.Run(fmt.Sprintf("%s/sessions=%d", row.name, sessions), func(b *testing.B) {
			var seen, ended []time.Duration
			for b.Loop() {
				round++
				s, e := abortRound(b, c, fmt.Sprintf("%s-%d", row.name, round), sessions, row.script, row.busy)
				seen, ended = append(seen, s...), append(ended, e...)
			}
			slices.Sort(seen)
			slices.Sort(ended)
			b.ReportMetric(ms(percentile(seen, 50)), "abort-p50-ms")
			b.ReportMetric(ms(percentile(seen, 99)), "abort-p99-ms")
			b.ReportMetric(ms(seen[len(seen)-1]), "abort-max-ms")
			b.ReportMetric(ms(percentile(ended, 99)), "ended-p99-ms")
		})
	}
}

// abortRound runs one round of BenchmarkRemoteAbortFanout on sessions
// named prefix-<i> and returns each session's time from its abort to
// agent_abort and to agent_end at its subscriber.
func abortRound(b *testing.B, c *client, prefix string, n int, script string, busy func(*eventsv1.Event) bool) (seen, ended []time.Duration) {
	b.Helper()
	base := time.Now()
	sent := make([]atomic.Int64, n) // ns after base, stored just before the abort is sent
	seen, ended = make([]time.Duration, n), make([]time.Duration, n)
	ready, done := make(chan struct{}, n), make(chan struct{}, n)
	pids := make([]*actor.PID, n)
	subs := make([]*actor.PID, n)
	for i := range n {
		pids[i] = c.create(b, fmt.Sprintf("%s-%d", prefix, i), script)
		isBusy := false
		subs[i] = c.sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
			ev, ok := ctx.Message().(*eventsv1.Event)
			switch {
			case !ok:
			case !isBusy && busy(ev):
				isBusy = true
				ready <- struct{}{}
			case ev.GetAgentAbort() != nil:
				seen[i] = time.Since(base) - time.Duration(sent[i].Load())
			case ev.GetAgentEnd() != nil:
				ended[i] = time.Since(base) - time.Duration(sent[i].Load())
				done <- struct{}{}
			}
		}))
		c.reply(b, pids[i], &remotev1.Subscribe{Subscriber: subs[i]})
	}
	for _, pid := range pids {
		c.reply(b, pid, &eventsv1.Prompt{Text: "go"})
	}
	for range n {
		waitFor(b, ready, "every session to be busy")
	}
	time.Sleep(20 * time.Millisecond) // every stream in its rhythm, every tool well started
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, pid := range pids {
		wg.Go(func() {
			<-start
			sent[i].Store(int64(time.Since(base)))
			res, err := c.sys.Root.RequestFuture(pid, &eventsv1.Abort{}, wait).Result()
			if r, ok := res.(*eventsv1.Reply); err == nil && (!ok || r.Error != nil) {
				err = fmt.Errorf("answer %v", res)
			}
			if err != nil {
				errs <- fmt.Errorf("abort %s: %w", pid.Id, err)
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	for range n {
		waitFor(b, done, "agent_end")
	}
	for i := range n {
		if seen[i] <= 0 {
			b.Fatalf("session %s-%d ended without agent_abort", prefix, i)
		}
	}
	for i, pid := range pids {
		_ = c.sys.Root.StopFuture(subs[i]).Wait()
		c.reply(b, pid, &eventsv1.CloseSession{})
	}
	return seen, ended
}

// waitFor takes one signal from ch, failing after a minute.
func waitFor(b *testing.B, ch chan struct{}, what string) {
	b.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		b.Fatalf("waited a minute for %s", what)
	}
}

// percentile is the p-th percentile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, p int) time.Duration {
	k := (len(sorted)*p + 99) / 100
	return sorted[max(k-1, 0)]
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
