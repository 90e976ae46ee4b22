package main

import (
	"testing"

	"github.com/tack-run/tack/bench/internal/measure"
)

func value(rt, scenario string, cores int, metric string, v float64) measure.Record {
	return measure.Record{Runtime: rt, Scenario: scenario, Cores: cores, Metric: metric, Unit: "ns", Value: &v}
}

// TestTurnsTable checks that each turn-overhead scenario gets its own
// table, on the core counts it ran on, with Tack/peer ratios.
func TestTurnsTable(t *testing.T) {
	recs := []measure.Record{
		{Runtime: "tack", Meta: map[string]string{"version": "(devel)"}},
		value("tack", "turns", 1, "cpu_per_turn", 20_000),
		value("tack", "turns", 1, "wall_per_turn", 21_000),
		value("tack", "turns", 2, "cpu_per_turn", 30_000),
		value("tack", "turns", 2, "wall_per_turn", 19_000),
		value("tack", "http-turns", 1, "cpu_per_turn", 100_000),
		value("tack", "http-turns", 1, "cpu_per_turn", 120_000),
		value("tack", "http-turns", 1, "cpu_per_turn", 110_000),
		value("tack", "http-turns", 1, "wall_per_turn", 200_000),
		value("tack", "http-turns", 1, "wall_per_turn", 220_000),
		value("tack", "http-turns", 1, "wall_per_turn", 210_000),
		value("eino", "http-turns", 1, "cpu_per_turn", 220_000),
		value("eino", "http-turns", 1, "wall_per_turn", 300_000),
		{Runtime: "pi", Scenario: "http-turns", Cores: 1, Unsupported: "no server"},
	}
	head := "| cores | runtime | CPU/turn (median) | CPU min – max | wall/turn (median) | wall min – max | Tack/peer CPU | Tack/peer wall |\n" +
		"|--:|---|--:|--:|--:|--:|--:|--:|\n"
	tests := []struct {
		scenario, want string
	}{
		{"http-turns", head +
			"| 1 | Tack | 110 µs | 100 µs – 120 µs (n=3) | 210 µs | 200 µs – 220 µs (n=3) | – | – |\n" +
			"| 1 | Eino | 220 µs | 220 µs – 220 µs (n=1) | 300 µs | 300 µs – 300 µs (n=1) | 0.50 | 0.70 |\n" +
			"| 1 | pi-agent-core | not supported: no server |  |  |  |  |  |\n"},
		{"turns", head +
			"| 1 | Tack | 20 µs | 20 µs – 20 µs (n=1) | 21 µs | 21 µs – 21 µs (n=1) | – | – |\n" +
			"| 1 | Eino | no data (the driver failed?) |  |  |  |  |  |\n" +
			"| 1 | pi-agent-core | no data (the driver failed?) |  |  |  |  |  |\n" +
			"| 2 | Tack | 30 µs | 30 µs – 30 µs (n=1) | 19 µs | 19 µs – 19 µs (n=1) | – | – |\n" +
			"| 2 | Eino | no data (the driver failed?) |  |  |  |  |  |\n" +
			"| 2 | pi-agent-core | no data (the driver failed?) |  |  |  |  |  |\n"},
	}
	d := newData(recs)
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			if got := d.turnsTable(tt.scenario); got != tt.want {
				t.Errorf("table\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestIdleTable checks that a peer's ratios are to the live Tack session
// and, where the size ran passivated into memory, to the passivated one,
// and that only a passivated row has a wake-up time.
func TestIdleTable(t *testing.T) {
	idle := func(rt, agents, metric string, v float64) measure.Record {
		r := value(rt, "idle", 2, metric, v)
		r.Case = "agents=" + agents
		return r
	}
	var recs []measure.Record
	for _, r := range []struct {
		rt, agents    string
		heap, rss, mk float64
		wake          float64
	}{
		{"tack", "100", 2048, 4096, 7000, 0},
		{"tack-passivated-memory", "100", 256, 512, 10_000, 3000},
		{"eino", "100", 512, 512, 500, 0},
		{"pi", "100", 1024, 2048, 4000, 0},
	} {
		recs = append(recs, idle(r.rt, r.agents, "heap_per_agent", r.heap), idle(r.rt, r.agents, "rss_per_agent", r.rss),
			idle(r.rt, r.agents, "create_per_agent", r.mk))
		if r.wake > 0 {
			recs = append(recs, idle(r.rt, r.agents, "wake_per_agent", r.wake))
		}
	}
	want := "| sessions | runtime | heap/session | heap min – max | RSS/session | RSS min – max | create/session | wake/session | Tack/peer heap | Tack/peer RSS |\n" +
		"|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|\n" +
		"| 100 | Tack | 2.00 KiB | 2.00 KiB – 2.00 KiB (n=1) | 4.00 KiB | 4.00 KiB – 4.00 KiB (n=1) | 7.0 µs | – | – | – |\n" +
		"| 100 | Tack, parked (no store: in memory) | 256 B | 256 B – 256 B (n=1) | 512 B | 512 B – 512 B (n=1) | 10 µs | 3.0 µs | – | – |\n" +
		"| 100 | Eino | 512 B | 512 B – 512 B (n=1) | 512 B | 512 B – 512 B (n=1) | 500 ns | – | 4.00 live, 0.50 passivated | 8.00 live, 1.00 passivated |\n" +
		"| 100 | pi-agent-core | 1.00 KiB | 1.00 KiB – 1.00 KiB (n=1) | 2.00 KiB | 2.00 KiB – 2.00 KiB (n=1) | 4.0 µs | – | 2.00 live, 0.25 passivated | 2.00 live, 0.25 passivated |\n"
	if got := newData(recs).idleTable(); got != want {
		t.Errorf("table\n%s\nwant\n%s", got, want)
	}
}

// TestAbortTable checks that each runtime's first round is shown apart
// from the rounds pooled: the p99 of each process's first round, and
// Tack's median over a peer's.
func TestAbortTable(t *testing.T) {
	rec := func(rt, metric string, s ...float64) measure.Record {
		return measure.Record{Runtime: rt, Scenario: "abort", Case: "sessions=10 tool=none", Cores: 2, Metric: metric, Unit: "us", Samples: s}
	}
	recs := []measure.Record{
		// Two Tack processes, a first round and a pooled one each.
		rec("tack", "first_abort_seen", 100, 4000), rec("tack", "first_abort_ended", 200, 4100),
		rec("tack", "abort_seen", 10, 20), rec("tack", "abort_ended", 30, 40),
		rec("tack", "first_abort_seen", 100, 2000), rec("tack", "first_abort_ended", 200, 2100),
		rec("tack", "abort_seen", 30, 40), rec("tack", "abort_ended", 50, 60),
		// One Eino process.
		rec("eino", "first_abort_seen", 1000, 1500), rec("eino", "first_abort_ended", 1100, 1600),
		rec("eino", "abort_seen", 100, 200), rec("eino", "abort_ended", 300, 400),
		// A stubborn tool's table is another.
		{Runtime: "tack", Scenario: "abort", Case: "sessions=10 tool=stubborn", Cores: 2, Metric: "abort_seen", Unit: "us", Samples: []float64{1}},
	}
	d := newData(recs)
	want := "| sessions | runtime | seen p50 | seen p99 | seen max | p99 of each round: median (min – max, rounds) | samples | run ended p99 | Tack/peer p50 | Tack/peer p99 | first round's p99: median (min – max, processes) | Tack/peer first round |\n" +
		"|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n" +
		"| 10 | Tack | 20 µs | 40 µs | 40 µs | – | 4 | 60 µs | – | – | 3.00 ms (2.00 ms – 4.00 ms, n=2) | – |\n" +
		"| 10 | Eino | 100 µs | 200 µs | 200 µs | – | 2 | 400 µs | 0.20 | 0.20 | 1.50 ms (1.50 ms – 1.50 ms, n=1) | 2.00 |\n" +
		"| 10 | pi-agent-core | " + d.missing("abort", "pi") + " |  |  |  |  |  |  |  |  |  |\n"
	if got := d.abortTable("none"); got != want {
		t.Errorf("table\n%s\nwant\n%s", got, want)
	}
}
