package http

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/sqlite"
)

// fanout is the load scenario of BenchmarkHTTPAbortFanout and
// TestHTTPAbortFanout, over a real server on a loopback port: sessions
// each stream a long text in small chunks, each watched by subscribers
// event streams; once every stream has shown text, the streams run for
// stream more, then every session is aborted at once over REST. The
// clients run in the same process as the server, on the same cores.
type fanout struct {
	sessions, subscribers   int
	chunkSize, chunkDelayMS int
	stream                  time.Duration
}

// fanoutResult is what one round of a fanout measured.
type fanoutResult struct {
	// abort holds, for every subscriber, the time from just before its
	// session's abort request was sent to the subscriber reading
	// agent_abort.
	abort []time.Duration
	// rest holds, for every session, the abort request's round trip;
	// publish, for every subscriber, the time from before the request to
	// the time the session put on agent_abort: the session's share.
	rest, publish []time.Duration
	// deltas is the message_delta events the subscribers read, all
	// together, during window (the streaming phase).
	deltas int64
	window time.Duration
}

// fanoutWait bounds each wait of a round.
const fanoutWait = 30 * time.Second

// closeWait bounds how long the event streams of a round may stay open
// once their sessions are closed.
const closeWait = 3 * time.Second

// fanoutText is each session's answer: long enough that no stream ends
// before the aborts.
var fanoutText = strings.Repeat("lorem ipsum dolor sit amet ", 2000)

// run plays one round on ts, with sessions named after round: create the
// sessions, open every subscriber, prompt every session at once, wait
// until every subscriber has read text, let them stream, abort every
// session at once, wait until every subscriber has read agent_abort,
// close the sessions. It fails tb when a subscriber misses agent_abort.
func (f fanout) run(tb testing.TB, ts *testServer, round int) fanoutResult {
	tb.Helper()
	script, err := json.Marshal(map[string]any{"turns": []map[string]any{
		{"text": fanoutText, "chunk_size": f.chunkSize, "chunk_delay_ms": f.chunkDelayMS},
	}})
	if err != nil {
		tb.Fatal(err)
	}
	ids := make([]string, f.sessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("r%d-s%03d", round, i)
		ts.must("POST", "/v1/sessions", "", fmt.Sprintf(`{"session":%q,"script":%s}`, ids[i], script), 201)
	}
	base := time.Now()
	var failed atomic.Int64
	var streaming, aborted, done sync.WaitGroup
	subs := make([]*fanoutSub, 0, f.sessions*f.subscribers)
	for i, id := range ids {
		for range f.subscribers {
			// open returns once the server has subscribed: it sends the
			// headers after that.
			sub := &fanoutSub{s: ts.open("/v1/sessions/"+id+"/events", "", ""), session: i}
			subs = append(subs, sub)
			streaming.Add(1)
			aborted.Add(1)
			done.Go(func() { sub.read(base, &failed, &streaming, &aborted) })
		}
	}
	// However the round ends, the sessions close and the readers end.
	defer func() {
		for _, id := range ids {
			ts.must("POST", "/v1/sessions/"+id+"/close", "", "", 204)
		}
		// Well within the runtime's request timeout (10 s), which a
		// stream must not wait for.
		if !waitFor(&done, closeWait) {
			tb.Fatalf("event streams still open %v after their sessions closed", closeWait)
		}
		for _, sub := range subs {
			sub.s.close()
			if sub.err != nil {
				tb.Error(sub.err)
			}
		}
	}()
	if err := each(f.sessions, func(i int) error { return ts.post("/v1/sessions/"+ids[i]+"/prompt", `{"text":"go"}`) }); err != nil {
		tb.Error(err)
		return fanoutResult{}
	}
	if !waitFor(&streaming, fanoutWait) || failed.Load() > 0 {
		tb.Errorf("not every subscriber read text (%d streams failed)", failed.Load())
		return fanoutResult{}
	}
	count := func() (n int64) {
		for _, sub := range subs {
			n += sub.deltas.Load()
		}
		return n
	}
	var res fanoutResult
	from, start := count(), time.Now()
	time.Sleep(f.stream) // the streaming phase: pacing, not an assertion
	res.deltas, res.window = count()-from, time.Since(start)

	sent := make([]time.Duration, f.sessions)
	sentWall := make([]time.Time, f.sessions)
	res.rest = make([]time.Duration, f.sessions)
	if err := each(f.sessions, func(i int) error {
		now := time.Now()
		sent[i], sentWall[i] = now.Sub(base), now
		err := ts.post("/v1/sessions/"+ids[i]+"/abort", `{}`)
		res.rest[i] = time.Since(base) - sent[i]
		return err
	}); err != nil {
		tb.Error(err)
		return fanoutResult{}
	}
	if !waitFor(&aborted, fanoutWait) || failed.Load() > 0 {
		tb.Errorf("not every subscriber read agent_abort (%d streams failed)", failed.Load())
		return fanoutResult{}
	}
	res.abort = make([]time.Duration, len(subs))
	res.publish = make([]time.Duration, len(subs))
	for i, sub := range subs {
		res.abort[i] = sub.abortAt - sent[sub.session]
		res.publish[i] = sub.published.Sub(sentWall[sub.session])
	}
	return res
}

// startFanout starts a server for a fanout, on SQLite when sqliteStore,
// with a client for its load.
func startFanout(tb testing.TB, sqliteStore bool) *testServer {
	tb.Helper()
	var st store.Store
	if sqliteStore {
		s, err := sqlite.Open(tb.Context(), filepath.Join(tb.TempDir(), "tack.db"))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = s.Close() }) // after the server's stop
		st = s
	}
	ts := start(tb, st)
	ts.client = loadClient() // the harness closes its spare connections before the server stops
	return ts
}

// percentile returns the p-th percentile (nearest rank) of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// BenchmarkHTTPAbortFanout measures abort delivery and event throughput
// over HTTP: 100 sessions, each streaming a long text in 4-character
// chunks every chunk_delay_ms (200 ms: a light load; 20 ms: about what a
// model streams; 5 ms: four times that), each watched by 10 event streams over real
// connections, read and parsed by goroutines of their own; after every
// stream has shown text the streams run 1 s, then all 100 sessions are
// aborted at once, each by its own POST .../abort.
//
//   - p50-ms, p99-ms, max-ms: per subscriber (1,000 a round), from just
//     before its session's abort request was sent to the subscriber
//     reading agent_abort;
//   - pub-p99-ms: from just before the abort request to the time the
//     session put on agent_abort (its wall-clock ts): the share of
//     getting the request to the session and the session publishing;
//   - rest-p99-ms: the abort requests' round trip;
//   - events/s: message_delta events read by all subscribers together
//     per second during the 1 s of streaming.
//
// One op is one round: create, subscribe, prompt, stream, abort, close.
// Latencies are pooled over the rounds.
func BenchmarkHTTPAbortFanout(b *testing.B) {
	for _, v := range []struct {
		store  string
		delay  int
		sqlite bool
	}{{"none", 200, false}, {"none", 20, false}, {"none", 5, false}, {"sqlite", 20, true}} {
		b.Run(fmt.Sprintf("store=%s/delay=%dms", v.store, v.delay), func(b *testing.B) {
			f := fanout{sessions: 100, subscribers: 10, chunkSize: 4, chunkDelayMS: v.delay, stream: time.Second}
			ts := startFanout(b, v.sqlite)
			var abort, rest, publish []time.Duration
			var deltas int64
			var window time.Duration
			round := 0
			for b.Loop() {
				r := f.run(b, ts, round)
				round++
				if b.Failed() {
					return
				}
				abort, rest, publish = append(abort, r.abort...), append(rest, r.rest...), append(publish, r.publish...)
				deltas, window = deltas+r.deltas, window+r.window
			}
			slices.Sort(abort)
			slices.Sort(rest)
			slices.Sort(publish)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(percentile(abort, 50)), "p50-ms")
			b.ReportMetric(ms(percentile(abort, 99)), "p99-ms")
			b.ReportMetric(ms(abort[len(abort)-1]), "max-ms")
			b.ReportMetric(ms(percentile(publish, 99)), "pub-p99-ms")
			b.ReportMetric(ms(percentile(rest, 99)), "rest-p99-ms")
			b.ReportMetric(float64(deltas)/window.Seconds(), "events/s")
			b.ReportMetric(float64(len(abort)), "samples")
		})
	}
}

// TestHTTPAbortFanout: with 100 sessions streaming to 10 event streams
// each, an abort of every session at once reaches every one of the 1,000
// streams, each within 100 ms of its abort request (the guarantee of
// abort, over HTTP).
func TestHTTPAbortFanout(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	f := fanout{sessions: 100, subscribers: 10, chunkSize: 4, chunkDelayMS: 20, stream: 500 * time.Millisecond}
	ts := startFanout(t, false)
	r := f.run(t, ts, 0)
	if t.Failed() {
		return
	}
	if len(r.abort) != 1000 {
		t.Fatalf("%d subscribers read agent_abort, want 1000", len(r.abort))
	}
	slices.Sort(r.abort)
	t.Logf("abort seen by all 1000 streams: p50 %v, p99 %v, max %v; %.0f delta events/s delivered",
		percentile(r.abort, 50), percentile(r.abort, 99), r.abort[999], float64(r.deltas)/r.window.Seconds())
	if raceEnabled {
		return // the race detector slows the server several times over
	}
	if worst := r.abort[len(r.abort)-1]; worst >= 100*time.Millisecond {
		t.Fatalf("an abort took %v to reach its subscriber, want < 100ms (p50 %v, p99 %v)",
			worst, percentile(r.abort, 50), percentile(r.abort, 99))
	}
}
