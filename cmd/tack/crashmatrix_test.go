package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tack-run/tack/store/postgres/pgtest"
)

var (
	crashMatrixSeeds      = flag.Int("tack.crashmatrixseeds", 24, "random crash points of TestCrashMatrix over tack rpc, per store")
	crashMatrixServeSeeds = flag.Int("tack.crashmatrixserveseeds", 6, "random crash points of TestCrashMatrix over tack serve, on SQLite")
)

// restartedResult is the result a restore gives a call that was running.
const restartedResult = "interrupted: process restarted"

// crashCase is one crash point: a script, the commands that bring a first
// `tack rpc` to the point, and what the restored session must show.
type crashCase struct {
	name    string
	plugins string   // create_session's plugins, a JSON array; "" for none
	turns   []string // the script's turns; turn i's text starts with "t<i>"
	// drive brings the first process to the crash point, after the first
	// prompt "p0" was sent.
	drive func(r *crashRun)
	want  recovery
}

// recovery is what a restore must find for a named case.
type recovery struct {
	recovered   bool // agent_recovered is in the replay
	fromState   string
	interrupted int
	resumed     bool
	approvals   int
	question    bool
	// next are the turns the script may go on at; nil: the turn after the
	// last one in the restored history (a request in flight at the crash
	// has its turn played again).
	next []int
}

// crashCases are the named crash points: each waits for the event that
// puts the session in its state, then kills the process.
func crashCases() []crashCase {
	// A long history, killed in the middle of its run: turn 21 sleeps,
	// so the kill lands in the run however far the process runs ahead of
	// the test reading its events (on a loaded machine it finished all
	// 41 turns before the kill came once).
	long := make([]string, 40)
	for i := range long {
		long[i] = fmt.Sprintf(`{"delay_ms":2,"text":"t%d","tool_calls":[{"name":"echo","args":{"text":"x"}}]}`, i+1)
	}
	long[20] = `{"delay_ms":2,"text":"t21","tool_calls":[{"name":"sleep","args":{"ms":30000}}]}`
	long = append(long, `{"text":"t41 done"}`)
	return []crashCase{{
		// The request in flight never answered: turn 1 is played again,
		// its delay paid once more.
		name:  "running",
		turns: []string{`{"delay_ms":1500,"text":"t1"}`, `{"text":"t2"}`},
		drive: func(r *crashRun) { r.until(stateTo("running")) },
		want:  recovery{recovered: true, fromState: "running", next: []int{1}},
	}, {
		name:  "running, steered",
		turns: []string{`{"delay_ms":1500,"text":"t1"}`, `{"text":"t2"}`},
		drive: func(r *crashRun) {
			r.until(stateTo("running"))
			r.accepted(r.steer("steer while running", true))
		},
		want: recovery{recovered: true, fromState: "running", next: []int{1}},
	}, {
		name:  "streaming",
		turns: []string{`{"text":"t1 slow","chunk_size":1,"chunk_delay_ms":300}`, `{"text":"t2"}`},
		drive: func(r *crashRun) {
			r.until(isType("message_delta"))
			r.accepted(r.prompt("prompt while streaming"))
		},
		want: recovery{recovered: true, fromState: "streaming", next: []int{1}},
	}, {
		// The scenario: a 30 s sleep in the first turn, a second
		// prompt queued; the restart must not sleep again.
		name:  "executing killable tool",
		turns: []string{`{"text":"t1","tool_calls":[{"name":"sleep","args":{"ms":30000}}]}`, `{"text":"t2"}`},
		drive: func(r *crashRun) {
			r.until(isType("tool_execution_start"))
			r.accepted(r.prompt("second prompt"))
		},
		want: recovery{recovered: true, fromState: "executing_tools", interrupted: 1, next: []int{2}},
	}, {
		name:  "executing immune tool",
		turns: []string{`{"text":"t1","tool_calls":[{"name":"sleep_immune","args":{"ms":30000}}]}`, `{"text":"t2"}`},
		drive: func(r *crashRun) { r.until(isType("tool_execution_start")) },
		want:  recovery{recovered: true, fromState: "executing_tools", interrupted: 1, next: []int{2}},
	}, {
		name:    "approval pending",
		plugins: `[{"name":"approval"}]`,
		turns:   []string{`{"text":"t1","tool_calls":[{"name":"shell","args":{"command":"echo approved"}}]}`, `{"text":"t2"}`},
		drive:   func(r *crashRun) { r.until(isType("approval_required")) },
		want:    recovery{recovered: true, fromState: "idle", resumed: true, approvals: 1, next: []int{2}},
	}, {
		name:    "question pending",
		plugins: `[{"name":"ask_user"}]`,
		turns:   []string{`{"text":"t1","tool_calls":[{"name":"ask_user","args":{"question":"Go on?","options":["yes","no"]}}]}`, `{"text":"t2"}`},
		drive:   func(r *crashRun) { r.until(isType("ask_user")) },
		want:    recovery{recovered: true, fromState: "idle", resumed: true, question: true, next: []int{2}},
	}, {
		name:  "prompts and steering queued",
		turns: []string{`{"text":"t1","tool_calls":[{"name":"sleep","args":{"ms":30000}}]}`, `{"text":"t2"}`},
		drive: func(r *crashRun) {
			r.until(isType("tool_execution_start"))
			r.accepted(r.prompt("queued one"))
			r.accepted(r.steer("steer kept", false))
			r.accepted(r.prompt("queued two"))
		},
		want: recovery{recovered: true, fromState: "executing_tools", interrupted: 1, next: []int{2}},
	}, {
		name:  "long run",
		turns: long,
		drive: func(r *crashRun) {
			r.until(func(m map[string]any) bool { return m["type"] == "tool_execution_start" && m["name"] == "sleep" })
		},
		want: recovery{recovered: true, fromState: "executing_tools", interrupted: 1, next: []int{22}},
	}, {
		// A rollback took the first run's call out; the second run's call
		// must not take its id again.
		name:  "after a rollback",
		turns: []string{`{"text":"t1","tool_calls":[{"name":"sleep","args":{"ms":2000}}]}`, `{"text":"t2","tool_calls":[{"name":"sleep","args":{"ms":50}}]}`},
		drive: func(r *crashRun) {
			r.until(isType("tool_execution_start"))
			r.accepted(r.promptIfBusy("p1 instead", "rollback"))
			if !slices.ContainsFunc(r.seen[slices.IndexFunc(r.seen, isType("tool_execution_start"))+1:], isType("tool_execution_start")) {
				r.until(isType("tool_execution_start")) // the second run's
			}
		},
		want: recovery{next: []int{2, 3}},
	}, {
		// The run was told ended aborted: the restart must not end it again.
		name:  "after an abort while running",
		turns: []string{`{"delay_ms":3000,"text":"t1"}`, `{"text":"t2"}`},
		drive: func(r *crashRun) {
			r.until(isType("request_start"))
			r.command("abort", nil)
			r.until(func(m map[string]any) bool { return m["type"] == "agent_end" && m["reason"] == "aborted" })
		},
		want: recovery{next: []int{1, 2}},
	}, {
		// The run was told started: its prompt is kept, and its id is not
		// given to another run.
		name:  "at agent_start",
		turns: []string{`{"delay_ms":1000,"text":"t1"}`, `{"text":"t2"}`},
		drive: func(r *crashRun) { r.until(isType("agent_start")) },
		want:  recovery{next: []int{1, 2}},
	}}
}

// TestCrashMatrix kills `tack rpc` and `tack serve` (kill -9) at each
// named crash point and at random ones, on SQLite and on PostgreSQL, and
// checks what the next process shows: reads first (messages, state,
// replay), then a prompt run to its end. Over tack serve PostgreSQL gets
// the named cases only.
func TestCrashMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildTack(t)
	for _, tr := range crashTransports {
		seeds := *crashMatrixSeeds
		if tr.name == "serve" {
			seeds = *crashMatrixServeSeeds
		}
		t.Run(tr.name, func(t *testing.T) {
			t.Run("sqlite", func(t *testing.T) {
				crashMatrix(t, tr, bin, seeds, func(t *testing.T, name string) []string {
					return []string{"--store", "sqlite:" + filepath.Join(t.TempDir(), "tack.db")}
				})
			})
			t.Run("postgres", func(t *testing.T) {
				dsn := pgtest.DSN(t)
				if tr.name == "serve" {
					seeds = 0
				}
				crashMatrix(t, tr, bin, seeds, func(t *testing.T, name string) []string {
					return []string{"--store", dsn, "--node", "node-" + tr.name + "-" + name}
				})
			})
		})
	}
}

// crashMatrix runs every case in parallel; storeArgs gives each its own
// store (SQLite) or node name (PostgreSQL, where session ids differ too).
func crashMatrix(t *testing.T, tr crashTransport, bin string, seeds int, storeArgs func(t *testing.T, name string) []string) {
	start := time.Now()
	t.Run("cases", func(t *testing.T) {
		for i, c := range crashCases() {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				id := fmt.Sprintf("%s-case-%d", tr.name, i)
				crashAt(t, tr, bin, storeArgs(t, id), id, c)
			})
		}
		for seed := range seeds {
			t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
				t.Parallel()
				id := fmt.Sprintf("%s-seed-%d", tr.name, seed)
				crashAt(t, tr, bin, storeArgs(t, id), id, randomCase(uint64(seed)))
			})
		}
	})
	t.Logf("%d crash points in %v", len(crashCases())+seeds, time.Since(start).Round(time.Millisecond))
}

// randomCase is a seeded random script and command sequence, killed at a
// random event count (or when the session has been quiet a while).
func randomCase(seed uint64) crashCase {
	rng := rand.New(rand.NewPCG(seed, 11))
	var turns []string
	for i := 1; i <= 12; i++ {
		switch rng.IntN(6) {
		case 0:
			turns = append(turns, fmt.Sprintf(`{"text":"t%d streamed","chunk_size":2,"chunk_delay_ms":3}`, i))
		case 1:
			turns = append(turns, fmt.Sprintf(`{"text":"t%d","tool_calls":[{"name":"echo","args":{"text":"x"}},{"name":"sleep","args":{"ms":%d}}]}`, i, 20+rng.IntN(60)))
		case 2:
			turns = append(turns, fmt.Sprintf(`{"text":"t%d","tool_calls":[{"name":"sleep_immune","args":{"ms":%d}}]}`, i, 20+rng.IntN(60)))
		case 3:
			turns = append(turns, fmt.Sprintf(`{"delay_ms":%d,"text":"t%d","tool_calls":[{"name":"echo","args":{"text":"x"}}]}`, rng.IntN(40), i))
		case 4:
			turns = append(turns, fmt.Sprintf(`{"delay_ms":%d,"text":"t%d"}`, rng.IntN(40), i))
		default:
			turns = append(turns, fmt.Sprintf(`{"thinking":"hmm","text":"t%d done"}`, i))
		}
	}
	kill := 5 + rng.IntN(60)
	type planned struct {
		at     int
		steer  bool
		keep   bool
		prompt string
	}
	var plan []planned
	for k := range rng.IntN(6) {
		plan = append(plan, planned{at: 1 + rng.IntN(kill), steer: rng.IntN(3) == 0, keep: rng.IntN(2) == 0, prompt: fmt.Sprintf("p%d", k+1)})
	}
	slices.SortFunc(plan, func(a, b planned) int { return a.at - b.at })
	return crashCase{
		name:  fmt.Sprintf("seed %d", seed),
		turns: turns,
		drive: func(r *crashRun) {
			for events := 0; events < kill; {
				if len(plan) > 0 && plan[0].at <= events {
					if plan[0].steer {
						r.steer(plan[0].prompt, !plan[0].keep)
					} else {
						r.prompt(plan[0].prompt)
					}
					plan = plan[1:]
					continue
				}
				m, ok := r.next(250 * time.Millisecond)
				switch {
				case !ok && len(plan) == 0:
					return // quiet, nothing left to send: crash now
				case !ok:
					plan[0].at = events // quiet: send the next command now
				case m["seq"] != nil:
					events++
				}
			}
		},
	}
}
