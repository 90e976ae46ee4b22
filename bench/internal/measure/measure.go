package measure

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// TurnsPerRun is the length of a turn-overhead run: TurnsPerRun-1 turns
// that each call echo, then one that answers with text.
const TurnsPerRun = 10

// Answer is the reply of every turn of the turns-1000 scenario, streamed
// in chunks of AnswerChunk characters (five chunks), with the fixed usage
// of every scripted turn.
const (
	Answer      = "Hello from the bench server."
	AnswerChunk = 6
)

// Params are a driver's flags; bench/run passes the same ones to every
// runtime.
type Params struct {
	// Scenario is turns, http-turns, turns-1000, abort, steer, idle,
	// throughput or serve-sse (Tack only).
	Scenario string
	// Cores labels the records with the cores the driver was pinned to.
	Cores int
	// Runs is the number of timed turn-overhead runs; Warmup the untimed
	// runs before them.
	Runs, Warmup int
	// BaseURL is the OpenAI-compatible server of http-turns
	// (bench/cmd/openaisrv), such as http://127.0.0.1:8080/v1.
	BaseURL string
	// Sessions streaming when the abort comes (turns-1000: running turns
	// at once; serve-sse: streaming to the event streams); Rounds of it
	// (serve-sse: of each phase); Tool is none
	// (streaming) or stubborn (a tool ignoring cancellation is running);
	// ToolMS is how long the stubborn or steered tool sleeps.
	Sessions, Rounds int
	Tool             string
	ToolMS           int
	// Turns is what each session of turns-1000 runs back to back, after
	// Warmup untimed ones.
	Turns int
	// Serve is the tack binary serve-sse starts as `tack serve`;
	// AbortSessions the sessions it aborts at once, each streaming one
	// character every ChunkMS to an event stream of its own; Store is
	// where the server keeps its sessions: memory or sqlite (a file in a
	// temporary directory).
	Serve         string
	AbortSessions int
	ChunkMS       int
	Store         string
	// Steers is the number of steer samples.
	Steers int
	// Agents is the number of idle sessions of the footprint scenario;
	// Passivate (Tack only) has the runtime passivate them and waits until
	// every one is, reporting as the runtime tack-passivated (Store
	// sqlite: in a SQLite file) or tack-passivated-memory (Store memory:
	// the runtime given no store keeps them in memory).
	Agents    int
	Passivate bool
	// Chunks streamed by the throughput model, to Subscribers (serve-sse:
	// by each session, to Subscribers event streams in all).
	Chunks, Subscribers int
	// CPUProfile and MemProfile, when set, are where a Go driver writes
	// its pprof profiles (see Profile).
	CPUProfile, MemProfile string
	heapWritten            bool
}

// Flags registers Params on fs.
func Flags(fs *flag.FlagSet) *Params {
	p := &Params{}
	fs.StringVar(&p.Scenario, "scenario", "turns", "turns, http-turns, turns-1000, abort, steer, idle, throughput or serve-sse (Tack only)")
	fs.IntVar(&p.Cores, "cores", runtime.GOMAXPROCS(0), "cores the driver is pinned to (a label)")
	fs.IntVar(&p.Runs, "runs", 100, "turns: timed runs of 10 turns; http-turns: timed runs of one turn")
	fs.IntVar(&p.Warmup, "warmup", 20, "turns, http-turns: untimed runs first; turns-1000: untimed turns per session first")
	fs.StringVar(&p.BaseURL, "base-url", "", "http-turns: the base URL of the OpenAI-compatible server (bench/cmd/openaisrv), such as http://127.0.0.1:8080/v1")
	fs.IntVar(&p.Sessions, "sessions", 100, "abort: sessions aborted at once; turns-1000: sessions running turns at once; serve-sse: sessions streaming to the event streams")
	fs.IntVar(&p.Rounds, "rounds", 3, "abort: rounds pooled, after a first one reported apart (first_abort_seen); serve-sse: rounds of each phase")
	fs.IntVar(&p.Turns, "turns", 10, "turns-1000: timed turns each session runs back to back")
	fs.StringVar(&p.Serve, "serve", "", "serve-sse: the tack binary to start as `tack serve`")
	fs.IntVar(&p.AbortSessions, "abort-sessions", 1000, "serve-sse: sessions aborted at once, each with an event stream")
	fs.IntVar(&p.ChunkMS, "chunk-ms", 20, "serve-sse: the delay between the characters the aborted sessions stream")
	fs.StringVar(&p.Store, "store", "memory", "serve-sse: where the server keeps its sessions; idle --passivate: where the passivated sessions are kept: memory or sqlite (a file in a temporary directory)")
	fs.StringVar(&p.Tool, "tool", "none", "abort: none (streaming) or stubborn (a tool ignoring cancellation runs)")
	fs.IntVar(&p.ToolMS, "tool-ms", 500, "abort, steer: how long the tool sleeps")
	fs.IntVar(&p.Steers, "steers", 10, "steer: samples")
	fs.IntVar(&p.Agents, "agents", 10000, "idle: sessions created")
	fs.BoolVar(&p.Passivate, "passivate", false, "idle, Tack only: passivate the sessions (kept as --store says) and measure once all are")
	fs.IntVar(&p.Chunks, "chunks", 100000, "throughput: chunks streamed; serve-sse: chunks each session streams (at most 4000, so that no stream can fall behind)")
	fs.IntVar(&p.Subscribers, "subscribers", 1, "throughput: subscribers; serve-sse: event streams in all, spread evenly over the sessions")
	fs.StringVar(&p.CPUProfile, "cpuprofile", "", "Go drivers: write a CPU profile of the run to this file")
	fs.StringVar(&p.MemProfile, "memprofile", "", "Go drivers: write a heap profile (allocations and live heap at the end) to this file")
	return p
}

// Record is one JSON line of a driver.
type Record struct {
	Runtime  string `json:"runtime"`
	Scenario string `json:"scenario,omitempty"`
	Case     string `json:"case,omitempty"`
	Cores    int    `json:"cores,omitempty"`
	Metric   string `json:"metric,omitempty"`
	Unit     string `json:"unit,omitempty"`
	// Value is a scalar measurement, Samples a distribution (latencies).
	Value   *float64  `json:"value,omitempty"`
	Samples []float64 `json:"samples,omitempty"`
	// Unsupported says why the runtime cannot do the scenario.
	Unsupported string `json:"unsupported,omitempty"`
	// Meta describes the runtime: its version and its language's.
	Meta map[string]string `json:"meta,omitempty"`
}

// Output prints a driver's records as JSON lines.
type Output struct {
	runtime string
	cores   int
	mu      sync.Mutex
	w       io.Writer
}

// NewOutput prints the records of runtime to stdout.
func NewOutput(runtime string, p *Params) *Output {
	return &Output{runtime: runtime, cores: p.Cores, w: os.Stdout}
}

// Meta prints the runtime's version line.
func (o *Output) Meta(version string) {
	o.write(Record{Runtime: o.runtime, Meta: map[string]string{"version": version, "lang": runtime.Version()}})
}

// Value prints a scalar measurement.
func (o *Output) Value(scenario, cas, metric, unit string, v float64) {
	o.write(Record{Runtime: o.runtime, Scenario: scenario, Case: cas, Cores: o.cores, Metric: metric, Unit: unit, Value: &v})
}

// AbortRounds is how many rounds the abort scenario plays: one more than
// p.Rounds, since a process's first burst of aborts is reported apart
// (AbortMetric). It also pays for the process's own warm-up — the heap
// growing into memory not yet touched, the stacks of new goroutines, a
// collection, a JIT's first compilations — which a later burst finds
// done (docs/benchmarks.md, issue 30's finding 7).
func AbortRounds(p *Params) int { return p.Rounds + 1 }

// AbortMetric is the name of an abort latency metric (abort_seen,
// abort_ended) for round, counted from 0: first_abort_seen and
// first_abort_ended for the first round.
func AbortMetric(metric string, round int) string {
	if round == 0 {
		return "first_" + metric
	}
	return metric
}

// Samples prints a distribution.
func (o *Output) Samples(scenario, cas, metric, unit string, s []float64) {
	o.write(Record{Runtime: o.runtime, Scenario: scenario, Case: cas, Cores: o.cores, Metric: metric, Unit: unit, Samples: s})
}

// Unsupported prints that the runtime cannot do scenario, and why.
func (o *Output) Unsupported(scenario, cas, why string) {
	o.write(Record{Runtime: o.runtime, Scenario: scenario, Case: cas, Cores: o.cores, Unsupported: why})
}

func (o *Output) write(r Record) {
	line, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintf(o.w, "%s\n", line)
}

// TimeTurns reports the turn overhead of scenario: batch(p.Warmup)
// untimed, then batch(p.Runs), whose CPU and wall time (see CPUTime) over
// its p.Runs*turnsPerRun turns become cpu_per_turn and wall_per_turn.
// batch runs n runs and times them, leaving out what it prepares before the
// clock starts.
func TimeTurns(p *Params, out *Output, scenario string, turnsPerRun int, batch func(n int) (cpu, wall time.Duration)) {
	batch(p.Warmup)
	cpu, wall := batch(p.Runs)
	n := float64(p.Runs * turnsPerRun)
	out.Value(scenario, "", "cpu_per_turn", "ns", float64(cpu.Nanoseconds())/n)
	out.Value(scenario, "", "wall_per_turn", "ns", float64(wall.Nanoseconds())/n)
}

// Micros converts durations to microseconds.
func Micros(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Microsecond)
	}
	return out
}

// CPUTime returns the CPU time (user and system, every thread) the process
// has used.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// LiveHeap collects garbage and returns the live heap in bytes.
func LiveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// RSS returns the resident set size in bytes after returning freed memory
// to the OS (Linux; 0 elsewhere).
func RSS() uint64 {
	debug.FreeOSMemory()
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// Fatal reports a driver failure and exits non-zero: bench/run fails only
// when a driver does.
func Fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "driver: "+format+"\n", args...)
	os.Exit(1)
}

// Deadline bounds every wait of a driver, so a hang becomes a failure.
const Deadline = 60 * time.Second

// Wait receives from c or fails after Deadline.
func Wait[T any](c <-chan T, what string) T {
	t := time.NewTimer(Deadline)
	defer t.Stop()
	select {
	case v := <-c:
		return v
	case <-t.C:
		Fatal("timed out waiting for %s", what)
	}
	panic("unreachable")
}

// ConcurrentTurns reports a turns-1000 run: p.Sessions sessions ran
// p.Turns turns each, all at once, in wall time, the process using cpu:
// the turns per second, the CPU per turn and the CPU of the whole run.
func ConcurrentTurns(p *Params, out *Output, cpu, wall time.Duration) {
	n := float64(p.Sessions * p.Turns)
	cas := fmt.Sprintf("sessions=%d", p.Sessions)
	out.Value("turns-1000", cas, "turns_per_s", "1/s", n/wall.Seconds())
	out.Value("turns-1000", cas, "cpu_per_turn", "ns", float64(cpu.Nanoseconds())/n)
	out.Value("turns-1000", cas, "cpu_total", "ns", float64(cpu.Nanoseconds()))
}
