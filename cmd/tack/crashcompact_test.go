package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack/store/postgres/pgtest"
)

var crashCompactSeeds = flag.Int("tack.crashcompactseeds", 8, "random kill points of TestCrashDuringCompaction around the store write, per store")

// summaryServer is the compact model: an OpenAI-compatible server whose
// summary answers the test lets out one at a time. A request is held
// until the test releases it (or the client goes away, as when its
// process is killed); after release, each request is answered at once.
type summaryServer struct {
	arrived  chan struct{} // a token for each request that comes in
	answered chan struct{} // a token for each answer written in full
	mu       sync.Mutex
	released bool
	release  chan struct{}
}

func newSummaryServer(t *testing.T) (*summaryServer, string) {
	t.Helper()
	s := &summaryServer{arrived: make(chan struct{}, 16), answered: make(chan struct{}, 16), release: make(chan struct{})}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	t.Cleanup(s.open) // before hs.Close: a held handler must not keep Close waiting
	return s, hs.URL
}

// open lets every request, now and later, be answered.
func (s *summaryServer) open() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.released {
		s.released = true
		close(s.release)
	}
}

func (s *summaryServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.arrived <- struct{}{}
	select {
	case <-s.release:
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range []string{
		delta("the user asked p1 and p2"), finish("stop"), usageChunk(40, 6, 0),
	} {
		fmt.Fprintf(w, "data: %s\n\n", c)
		w.(http.Flusher).Flush()
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	w.(http.Flusher).Flush()
	s.answered <- struct{}{}
}

// compactCrash is one kill point of a compaction.
type compactCrash struct {
	name string
	// script is the session's own model; prompts are sent one run after
	// the other, each until its agent_end, but the last when midRun.
	script  string
	prompts []string
	midRun  bool
	context string // create_session's context option
	// start begins the compaction once the prompts are done: a compact
	// command, or nothing when compact_at_percent does it mid-run.
	start func(r *crashRun)
	// kill waits for the moment to kill the first process.
	kill func(r *crashRun, srv *summaryServer)
	// old, new: what the restored session may show — the history before
	// the compaction, or after it (cut: how many messages it replaces).
	// A kill point that is sure of its outcome names only one.
	old, new bool
	cut      int
}

func compactCrashes() []compactCrash {
	idle := `{"turns":[{"text":"t1"},{"text":"t2"},{"text":"t3"}],"when_exhausted":"echo"}`
	command := func(r *crashRun) {
		r.p.do("compact", "compact", nil)
		if m := r.until(isResponse("compact")); m["ok"] != true {
			r.t.Fatalf("compact: %v", m["<raw>"])
		}
	}
	arrived := func(r *crashRun, srv *summaryServer) {
		// Events and answers are written by different goroutines:
		// compact_start may have come before the command's answer.
		if !slices.ContainsFunc(r.seen, isType("compact_start")) {
			r.until(isType("compact_start"))
		}
		<-srv.arrived
	}
	cases := []compactCrash{{
		name: "summary requested, not answered", script: idle, prompts: []string{"p1", "p2", "p3"},
		context: `{"keep_recent":2,"compact_model":"local/m1"}`, start: command, kill: arrived, old: true, cut: 4,
	}, {
		// compact_end is told only once the store holds the new history.
		name: "compact_end told", script: idle, prompts: []string{"p1", "p2", "p3"},
		context: `{"keep_recent":2,"compact_model":"local/m1"}`, start: command, new: true, cut: 4,
		kill: func(r *crashRun, srv *summaryServer) {
			arrived(r, srv)
			srv.open()
			r.until(isType("compact_end"))
		},
	}, {
		// compact_at_percent: the run waits at its turn gap for the summary.
		name:    "mid-run, at the turn gap",
		script:  `{"context_window":100,"turns":[{"tool_calls":[{"name":"echo","args":{"text":"x"}}],"usage":{"input_tokens":90,"output_tokens":1}},{"text":"t2"}],"when_exhausted":"echo"}`,
		context: `{"keep_recent":2,"compact_at_percent":80,"compact_model":"local/m1"}`,
		prompts: []string{"p1"}, midRun: true, start: func(*crashRun) {}, kill: arrived, old: true, cut: 1,
	}}
	for seed := range *crashCompactSeeds {
		// Killed from 0 to 6 ms after the summary was written to the
		// process: before the answer is read, while the new history is
		// being stored, or after.
		wait := time.Duration(rand.New(rand.NewPCG(uint64(seed), 3)).IntN(6000)) * time.Microsecond
		cases = append(cases, compactCrash{
			name: fmt.Sprintf("seed %d: %v after the summary", seed, wait), script: idle, prompts: []string{"p1", "p2", "p3"},
			context: `{"keep_recent":2,"compact_model":"local/m1"}`, start: command, old: true, new: true, cut: 4,
			kill: func(r *crashRun, srv *summaryServer) {
				arrived(r, srv)
				srv.open()
				<-srv.answered
				time.Sleep(wait) // choosing the kill point, not waiting for an outcome
			},
		})
	}
	return cases
}

// TestCrashDuringCompaction kills `tack rpc` (kill -9) at points of a
// compaction — the summary requested and not answered, the summary in and
// the new history being stored, compact_end told, and mid-run while the
// run waits at its turn gap — on SQLite and on PostgreSQL. The next
// process must show the history before the compaction or after it, never
// a mix; get_messages with all must hold every message the first process
// told committed, in order; and the session must work on: a prompt runs
// to its end and a compaction succeeds.
func TestCrashDuringCompaction(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildTack(t)
	t.Run("sqlite", func(t *testing.T) {
		for i, c := range compactCrashes() {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				crashCompaction(t, bin, []string{"--store", "sqlite:" + filepath.Join(t.TempDir(), "tack.db")}, fmt.Sprintf("cc-%d", i), c)
			})
		}
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		for i, c := range compactCrashes() {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				id := fmt.Sprintf("cc-%d", i)
				crashCompaction(t, bin, []string{"--store", dsn, "--node", "node-" + id}, id, c)
			})
		}
	})
}

// crashCompaction runs one kill point: a first process driven into the
// compaction and killed, then a second on the same store.
func crashCompaction(t *testing.T, bin string, args []string, session string, c compactCrash) {
	srv, url := newSummaryServer(t)
	rpc := append([]string{"rpc", "--config", writeConfig(t, url)}, args...)
	start := func() *rpcProcess {
		cmd := exec.Command(bin, rpc...)
		cmd.Env = append(os.Environ(), "LOCAL_KEY=secret")
		return startCmd(t, cmd)
	}
	r := &crashRun{t: t, p: &rpcCrash{start(), session}, session: session, texts: map[string]string{}}
	r.p.do("create_session", "create", map[string]any{"tools": []string{"echo"}, "context": json.RawMessage(c.context), "script": json.RawMessage(c.script)})
	if m := r.until(isResponse("create")); m["ok"] != true {
		t.Fatalf("create_session: %v", m["<raw>"])
	}
	for i, p := range c.prompts {
		r.prompt(p)
		if !c.midRun || i < len(c.prompts)-1 {
			r.until(isType("agent_end"))
		}
	}
	c.start(r)
	c.kill(r, srv)
	r.seen = append(r.seen, r.p.kill()...)
	committed := committedMessages(r.seen)
	srv.open() // the second process's summaries are answered at once

	p := start()
	get := func(cmd, id, extra string) map[string]any {
		t.Helper()
		p.send(fmt.Sprintf(`{"cmd":%q,"id":%q,"session":%q%s}`, cmd, id, session, extra))
		m := last(p.until(isResponse(id)))
		if m["ok"] != true {
			t.Fatalf("%s after the restart: %v", cmd, m["<raw>"])
		}
		data, _ := m["data"].(map[string]any)
		return data
	}
	working := get("get_messages", "m1", "")["messages"].([]any)
	all := get("get_messages", "a1", `,"all":true`)["messages"].([]any)
	if err := checkHistory(working, nil); err != nil {
		t.Fatalf("restored history: %v\n%s", err, dump(working))
	}
	// What the first process told committed, by index of its working
	// history; the history before the compaction is all of it.
	old := committed
	switch {
	case c.old && reflect.DeepEqual(working, old) && reflect.DeepEqual(all, old):
		t.Logf("the old history (%d messages)", len(old))
	case c.new && isCompacted(old, c.cut, working, all):
		t.Logf("the new history (%d messages replaced)", c.cut)
	default:
		t.Fatalf("restored neither the old history (allowed: %v) nor the new one (allowed: %v):\nold %s\nworking %s\nall %s",
			c.old, c.new, dump(old), dump(working), dump(all))
	}
	if st := get("get_state", "s1", ""); st["state"] != "idle" {
		t.Fatalf("restored state: %v", st)
	}

	// The session works on: a prompt runs to its end, a compaction
	// replaces what it should, and all still holds everything in order.
	// The restore tells the crashed run's agent_end (interrupted) on the
	// session's first use, and tack rpc may write it after the answers
	// above: wait for the end of the run this prompt starts.
	p.send(fmt.Sprintf(`{"cmd":"prompt","id":"again","session":%q,"text":"again"}`, session))
	run := last(p.until(isType("agent_start")))["run_id"]
	end := last(p.until(func(m map[string]any) bool { return m["type"] == "agent_end" && m["run_id"] == run }))
	if end["reason"] != "completed" {
		t.Fatalf("the prompt after the restart ended %v", end["<raw>"])
	}
	before := get("get_messages", "m2", "")["messages"].([]any)
	p.send(fmt.Sprintf(`{"cmd":"compact","id":"c2","session":%q}`, session))
	lines := p.until(isType("compact_end")) // the answer may come before or after it
	if !slices.ContainsFunc(lines, isResponse("c2")) {
		p.until(isResponse("c2"))
	}
	if removed := last(lines)["removed_count"]; removed != float64(len(before)-2) {
		t.Fatalf("the compaction after the restart removed %v of %d messages, want all but 2", removed, len(before))
	}
	final := get("get_messages", "a2", `,"all":true`)["messages"].([]any)
	if got, want := withoutSummaries(final), append(withoutSummaries(all), before[len(before)-2:]...); !reflect.DeepEqual(got, want) {
		t.Fatalf("all after the second compaction:\n%s\nwant (summaries aside)\n%s", dump(got), dump(want))
	}
}

// committedMessages is the working history the first process told, from
// its message_committed events: each at its index.
func committedMessages(seen []map[string]any) []any {
	var out []any
	for _, m := range seen {
		if m["type"] != "message_committed" {
			continue
		}
		i := int(m["index"].(float64))
		out = append(out[:min(i, len(out))], m["message"])
	}
	return out
}

// isCompacted reports whether working and all are old after a compaction
// of its first cut messages: all is those, marked compacted, then the
// working history, which is one summary and the rest of old.
func isCompacted(old []any, cut int, working, all []any) bool {
	if len(working) != len(old)-cut+1 || !reflect.DeepEqual(working[1:], old[cut:]) {
		return false
	}
	s := working[0].(map[string]any)
	if s["role"] != "user" || s["summary"] != true || s["content"] != "[Summary of the earlier conversation]\nthe user asked p1 and p2" {
		return false
	}
	if len(all) != cut+len(working) || !reflect.DeepEqual(all[cut:], working) {
		return false
	}
	for i, m := range all[:cut] {
		m := maps(m)
		if m["compacted"] != true {
			return false
		}
		delete(m, "compacted")
		if !reflect.DeepEqual(m, old[i]) {
			return false
		}
	}
	return true
}

// withoutSummaries is msgs without summary messages and compacted marks:
// every message committed, in order.
func withoutSummaries(msgs []any) []any {
	var out []any
	for _, m := range msgs {
		m := maps(m)
		if m["summary"] == true {
			continue
		}
		delete(m, "compacted")
		out = append(out, m)
	}
	return out
}

// maps is a shallow copy of a JSON object.
func maps(m any) map[string]any {
	out := map[string]any{}
	for k, v := range m.(map[string]any) {
		out[k] = v
	}
	return out
}
