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
		"| 100 | Tack, passivated (no store: in memory) | 256 B | 256 B – 256 B (n=1) | 512 B | 512 B – 512 B (n=1) | 10 µs | 3.0 µs | – | – |\n" +
		"| 100 | Eino | 512 B | 512 B – 512 B (n=1) | 512 B | 512 B – 512 B (n=1) | 500 ns | – | 4.00 live, 0.50 passivated | 8.00 live, 1.00 passivated |\n" +
		"| 100 | pi-agent-core | 1.00 KiB | 1.00 KiB – 1.00 KiB (n=1) | 2.00 KiB | 2.00 KiB – 2.00 KiB (n=1) | 4.0 µs | – | 2.00 live, 0.25 passivated | 2.00 live, 0.25 passivated |\n"
	if got := newData(recs).idleTable(); got != want {
		t.Errorf("table\n%s\nwant\n%s", got, want)
	}
}
