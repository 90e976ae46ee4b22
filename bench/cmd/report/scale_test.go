package main

import (
	"strings"
	"testing"

	"github.com/tack-run/tack/bench/internal/measure"
)

func caseValueRec(rt, scenario, cas string, cores int, metric string, v float64) measure.Record {
	r := value(rt, scenario, cores, metric, v)
	r.Case = cas
	return r
}

func samplesRec(cas, metric string, s ...float64) measure.Record {
	return measure.Record{Runtime: "tack", Scenario: "serve-sse", Case: cas, Cores: 2, Metric: metric, Unit: "us", Samples: s}
}

// TestTurns1000Table checks the rows per core count, the ratios (turns/s
// above 1 when Tack does more) and a peer without figures.
func TestTurns1000Table(t *testing.T) {
	const cas = "sessions=1000"
	d := newData([]measure.Record{
		caseValueRec("tack", "turns-1000", cas, 2, "turns_per_s", 9_500),
		caseValueRec("tack", "turns-1000", cas, 2, "cpu_per_turn", 50_000),
		caseValueRec("tack", "turns-1000", cas, 2, "cpu_total", 1e9),
		caseValueRec("eino", "turns-1000", cas, 2, "turns_per_s", 5_000),
		caseValueRec("eino", "turns-1000", cas, 2, "cpu_per_turn", 100_000),
		caseValueRec("eino", "turns-1000", cas, 2, "cpu_total", 2e9),
	})
	want := "| cores | sessions | runtime | turns/s (median) | turns/s min – max | CPU/turn (median) | CPU total (median) | CPU total min – max | Tack/peer turns/s | Tack/peer CPU/turn |\n" +
		"|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|\n" +
		"| 2 | 1000 | Tack | 9.5 k/s | 9.5 k/s – 9.5 k/s (n=1) | 50 µs | 1.00 s | 1.00 s – 1.00 s (n=1) | – | – |\n" +
		"| 2 | 1000 | Eino | 5.0 k/s | 5.0 k/s – 5.0 k/s (n=1) | 100 µs | 2.00 s | 2.00 s – 2.00 s (n=1) | 1.90 | 0.50 |\n" +
		"| 2 | 1000 | pi-agent-core | no data (the driver failed?) |  |  |  |  |  |  |\n"
	if got := d.turns1000Table(); got != want {
		t.Errorf("table\n%s\nwant\n%s", got, want)
	}
}

// TestSSETables checks the two tables of serve-sse: events/s, and the
// abort latencies against the 100 ms bound, met or not.
func TestSSETables(t *testing.T) {
	const events = "store=memory sessions=100 streams=1000 chunks=200"
	d := newData([]measure.Record{
		caseValueRec("tack", "serve-sse", events, 2, "events_per_s", 150_000),
		caseValueRec("tack", "serve-sse", events, 2, "server_cpu_per_event", 3_000),
		caseValueRec("tack", "serve-sse", events, 2, "client_cpu_per_event", 5_000),
		caseValueRec("tack", "serve-sse", "store=memory sessions=100 chunk_ms=20", 2, "streaming_events_per_s", 5_000),
		samplesRec("store=memory sessions=100 chunk_ms=20", "abort_seen", 10_000, 20_000, 30_000),
		samplesRec("store=memory sessions=100 chunk_ms=20", "abort_ended", 11_000, 21_000, 31_000),
		samplesRec("store=memory sessions=100 chunk_ms=20", "abort_answered", 12_000, 22_000, 32_000),
		samplesRec("store=memory sessions=100 chunk_ms=20", "abort_published", 1_000, 2_000, 3_000),
		samplesRec("store=sqlite sessions=1000 chunk_ms=20", "abort_seen", 90_000, 150_000),
	})
	wantEvents := "| store | sessions | event streams | chunks each | events/s (median) | min – max | server CPU/event | client CPU/event |\n" +
		"|--:|--:|--:|--:|--:|--:|--:|--:|\n" +
		"| memory | 100 | 1000 | 200 | 150 k/s | 150 k/s – 150 k/s (n=1) | 3.0 µs | 5.0 µs |\n"
	if got := d.sseEventsTable(); got != wantEvents {
		t.Errorf("events table\n%s\nwant\n%s", got, wantEvents)
	}
	wantAbort := "| store | sessions | a character every | events/s streamed | seen p50 | seen p99 | seen max | p99 of each round: median (min – max, rounds) | samples | published p99 | run ended p99 | abort answered p99 | every abort seen within 100 ms |\n" +
		"|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n" +
		"| memory | 100 | 20 ms | 5.0 k/s | 20.00 ms | 30.00 ms | 30.00 ms | 30.00 ms (30.00 ms – 30.00 ms, n=1) | 3 | 3.00 ms | 31.00 ms | 32.00 ms | met |\n" +
		"| sqlite | 1000 | 20 ms | – | 90.00 ms | 150.00 ms | 150.00 ms | 150.00 ms (150.00 ms – 150.00 ms, n=1) | 2 | – | – | – | **not met**: 1 of 2 over |\n"
	if got := d.sseAbortTable(); got != wantAbort {
		t.Errorf("abort table\n%s\nwant\n%s", got, wantAbort)
	}
}

// TestSSETablesWithoutData: a failed driver leaves a row saying so.
func TestSSETablesWithoutData(t *testing.T) {
	d := newData(nil)
	for name, got := range map[string]string{"events": d.sseEventsTable(), "abort": d.sseAbortTable()} {
		if !strings.Contains(got, "no data (the driver failed?)") {
			t.Errorf("%s table without data:\n%s", name, got)
		}
	}
}
