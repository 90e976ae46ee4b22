package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tack-run/tack/bench/internal/measure"
	"github.com/tack-run/tack/bench/internal/sse"
)

// maxSSEChunks bounds the chunks a session of the events phase streams:
// a run is then fewer events than a stream may fall behind (4096,
// docs/http.md), so no stream can lose events however slow it is read.
const maxSSEChunks = 4000

// serveSSE measures `tack serve` over real HTTP: bin/tack-serve (the
// tack command built from the repository) runs as a process of its own
// with p.Store (memory or SQLite), and this driver is its clients, each
// event stream a connection read and parsed by a goroutine of its own.
// Two phases on one server, p.Rounds rounds each: eventsPhase (after an
// untimed round), then abortPhase.
func serveSSE(p *measure.Params, out *measure.Output) {
	if p.Sessions <= 0 || p.Subscribers < p.Sessions || p.Subscribers%p.Sessions != 0 {
		measure.Fatal("serve-sse: --subscribers (%d) must be a multiple of --sessions (%d)", p.Subscribers, p.Sessions)
	}
	if p.Chunks <= 0 || p.Chunks > maxSSEChunks {
		measure.Fatal("serve-sse: --chunks %d: between 1 and %d, so that no stream can fall behind", p.Chunks, maxSSEChunks)
	}
	srv := startServer(p.Serve, p.Store, 2*max(p.Subscribers, p.AbortSessions))
	eventsPhase(p, srv, out)
	abortPhase(p, srv, out)
	srv.stop()
}

// inlineScript is an inline script of one turn streaming text in
// one-character chunks, delayMS apart, with the fixed usage.
func inlineScript(text string, delayMS int) string {
	data, err := json.Marshal(map[string]any{"turns": []turn{{Text: text, ChunkSize: 1, ChunkDelayMS: delayMS, Usage: fixedUsage}}})
	if err != nil {
		measure.Fatal("%v", err)
	}
	return string(data)
}

// event is what a client decodes of every event's data.
type event struct {
	Type   string `json:"type"`
	Seq    int64  `json:"seq"`
	Ts     string `json:"ts"`
	Reason string `json:"reason"`
}

// stamped is how long after sent the session stamped ev: its ts, an
// RFC 3339 time, less sent, on the wall clock both processes read.
func stamped(ev event, sent time.Time) time.Duration {
	ts, err := time.Parse(time.RFC3339Nano, ev.Ts)
	if err != nil {
		measure.Fatal("event %s seq %d: ts %q: %v", ev.Type, ev.Seq, ev.Ts, err)
	}
	return ts.Sub(sent)
}

// readStream reads the event stream body to its end, decoding every
// event's data and handing it to on. It fails on events_lost, on an event
// whose data disagrees with its SSE id and type, and on an id that does
// not follow the one before (a gap or a duplicate).
func readStream(body io.ReadCloser, on func(event)) error {
	defer body.Close()
	r := sse.NewReader(body)
	var last int64
	for {
		msg, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var ev event
		if err := json.Unmarshal([]byte(msg.Data), &ev); err != nil {
			return fmt.Errorf("event %s: %v", msg.Type, err)
		}
		if ev.Type == "events_lost" {
			return fmt.Errorf("the stream lost events: %s", msg.Data)
		}
		id, err := strconv.ParseInt(msg.ID, 10, 64)
		if err != nil || ev.Type != msg.Type || ev.Seq != id || (last != 0 && id != last+1) {
			return fmt.Errorf("event %s id %q after id %d, data %s", msg.Type, msg.ID, last, msg.Data)
		}
		last = id
		on(ev)
	}
}

// streams opens `per` event streams on each session of ids and reads each
// on a goroutine of its own, handing its events to reader(i), made for it,
// i the index of its session in ids. The returned wait returns once every
// stream has ended, failing after measure.Deadline.
func streams(srv *server, ids []string, per int, reader func(i int) func(event)) (wait func(what string)) {
	bodies := make([]io.ReadCloser, len(ids)*per)
	each(len(bodies), 16, func(j int) { bodies[j] = srv.events(ids[j/per]) })
	done := make(chan struct{}, len(bodies))
	for j, body := range bodies {
		on := reader(j / per)
		go func() {
			if err := readStream(body, on); err != nil {
				measure.Fatal("event stream of %s: %v", ids[j/per], err)
			}
			done <- struct{}{}
		}()
	}
	return func(what string) {
		for range bodies {
			measure.Wait(done, what)
		}
	}
}

// createSessions creates the sessions ids, each with the inline script.
func createSessions(srv *server, ids []string, script string) {
	each(len(ids), 16, func(i int) {
		srv.do("POST", "/v1/sessions", fmt.Sprintf(`{"session":%q,"script":%s}`, ids[i], script), 201)
	})
}

// deleteSessions deletes the sessions ids, which ends their streams, and
// waits for the streams to end.
func deleteSessions(srv *server, ids []string, wait func(string)) {
	each(len(ids), 16, func(i int) { srv.do("DELETE", "/v1/sessions/"+ids[i], "", 204) })
	wait("the event streams to end after their sessions were deleted")
}

// eventsPhase: p.Sessions sessions, p.Subscribers event streams spread
// evenly over them; each round prompts every session at once, and each
// session streams p.Chunks one-character chunks with no delay. The figure
// is the message_delta events every stream read, summed, per second from
// the prompts to the last stream reading agent_end; every stream must
// read each chunk, and the run must end completed. Server and client CPU
// (the driver's) are given per event read.
func eventsPhase(p *measure.Params, srv *server, out *measure.Output) {
	ids := make([]string, p.Sessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("events-%d", i)
	}
	createSessions(srv, ids, inlineScript(strings.Repeat("x", p.Chunks), 0))
	type end struct {
		deltas int
		reason string
	}
	ends := make(chan end, p.Subscribers)
	wait := streams(srv, ids, p.Subscribers/p.Sessions, func(int) func(event) {
		deltas := 0 // since the last agent_end
		return func(ev event) {
			switch ev.Type {
			case "message_delta":
				deltas++
			case "agent_end":
				ends <- end{deltas, ev.Reason}
				deltas = 0
			}
		}
	})
	cas := fmt.Sprintf("store=%s sessions=%d streams=%d chunks=%d", p.Store, p.Sessions, p.Subscribers, p.Chunks)
	for round := range p.Rounds + 1 {
		srv0, cpu0, t0 := srv.cpu(), measure.CPUTime(), time.Now()
		each(len(ids), len(ids), func(i int) { srv.do("POST", "/v1/sessions/"+ids[i]+"/prompt", `{"text":"go"}`, 200) })
		read := 0
		for range p.Subscribers {
			e := measure.Wait(ends, "agent_end on every event stream")
			if e.reason != "completed" || e.deltas != p.Chunks {
				measure.Fatal("a stream read %d message_delta events and agent_end %s, want %d and completed", e.deltas, e.reason, p.Chunks)
			}
			read += e.deltas
		}
		elapsed, srvCPU, cpu := time.Since(t0), srv.cpu()-srv0, measure.CPUTime()-cpu0
		if round == 0 {
			continue // the warm-up
		}
		n := float64(read)
		out.Value("serve-sse", cas, "events_per_s", "1/s", n/elapsed.Seconds())
		out.Value("serve-sse", cas, "server_cpu_per_event", "ns", float64(srvCPU.Nanoseconds())/n)
		out.Value("serve-sse", cas, "client_cpu_per_event", "ns", float64(cpu.Nanoseconds())/n)
	}
	deleteSessions(srv, ids, wait)
}

// abortWindow is how long the sessions of the abort phase stream, every
// stream reading, before the aborts: the load the aborts come under.
const abortWindow = 500 * time.Millisecond

// abortPhase: p.AbortSessions sessions, an event stream each, stream one
// character every p.ChunkMS ms. Once every stream has read text, and
// abortWindow more has passed (the message_delta events read in it give
// streaming_events_per_s), every session is aborted at once, each by its
// own POST …/abort from a goroutine of its own, on the kept-alive
// connections the prompts opened. A sample is the time from just before
// a session's abort request is sent to its stream reading agent_abort
// (abort_seen) and agent_end, which must say aborted (abort_ended), and
// to the request's answer (abort_answered); abort_published is until the
// time agent_abort carries, which the session stamped as it published it
// (the server and the driver read one clock), so that what the server
// took to act on the request stands apart from what the event took to
// reach its reader. Each round has fresh sessions, deleted at its end.
func abortPhase(p *measure.Params, srv *server, out *measure.Output) {
	n := p.AbortSessions
	// Longer than any round can last.
	text := strings.Repeat("a", max(1000, int(2*measure.Deadline/time.Millisecond)/max(p.ChunkMS, 1)))
	cas := fmt.Sprintf("store=%s sessions=%d chunk_ms=%d", p.Store, n, p.ChunkMS)
	for round := range p.Rounds {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("abort%d-%d", round, i)
		}
		createSessions(srv, ids, inlineScript(text, p.ChunkMS))
		base := time.Now()
		sent := make([]atomic.Int64, n) // ns after base
		seen, ended, answered := make([]time.Duration, n), make([]time.Duration, n), make([]time.Duration, n)
		published := make([]time.Duration, n)
		var deltas atomic.Int64
		busy, done := make(chan struct{}, n), make(chan struct{}, n)
		wait := streams(srv, ids, 1, func(i int) func(event) {
			isBusy := false
			since := func() time.Duration { return time.Since(base) - time.Duration(sent[i].Load()) }
			return func(ev event) {
				switch ev.Type {
				case "message_delta":
					deltas.Add(1)
					if !isBusy {
						isBusy = true
						busy <- struct{}{}
					}
				case "agent_abort":
					if seen[i] == 0 {
						seen[i] = since()
						published[i] = stamped(ev, base.Add(time.Duration(sent[i].Load())))
					}
				case "agent_end":
					if ev.Reason != "aborted" {
						measure.Fatal("session %s ended %s, want aborted", ids[i], ev.Reason)
					}
					ended[i] = since()
					done <- struct{}{}
				}
			}
		})
		each(n, n, func(i int) { srv.do("POST", "/v1/sessions/"+ids[i]+"/prompt", `{"text":"go"}`, 200) })
		for range n {
			measure.Wait(busy, "every event stream to read text")
		}
		from, t0 := deltas.Load(), time.Now()
		time.Sleep(abortWindow) // the streaming the aborts come under: pacing, not a wait for something
		out.Value("serve-sse", cas, "streaming_events_per_s", "1/s", float64(deltas.Load()-from)/time.Since(t0).Seconds())
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				sent[i].Store(int64(time.Since(base)))
				srv.do("POST", "/v1/sessions/"+ids[i]+"/abort", "{}", 200)
				answered[i] = time.Since(base) - time.Duration(sent[i].Load())
			})
		}
		close(start)
		for range n {
			measure.Wait(done, "agent_end on every event stream")
		}
		wg.Wait()
		for i := range n {
			if seen[i] <= 0 {
				measure.Fatal("session %s ended without agent_abort on its stream", ids[i])
			}
		}
		out.Samples("serve-sse", cas, "abort_seen", "us", measure.Micros(seen))
		out.Samples("serve-sse", cas, "abort_ended", "us", measure.Micros(ended))
		out.Samples("serve-sse", cas, "abort_answered", "us", measure.Micros(answered))
		out.Samples("serve-sse", cas, "abort_published", "us", measure.Micros(published))
		deleteSessions(srv, ids, wait)
	}
}
