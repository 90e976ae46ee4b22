package main

import (
	"fmt"
	"strconv"
)

// abortBound is the protocol's bound on telling an abort: agent_abort
// reaches every subscriber within 100 ms of the abort (docs/control.md).
const abortBound = 100e3 // µs

// turns1000Table: turns per second and CPU of many sessions running
// turns at once, per core count.
func (d *data) turns1000Table() string {
	var rows [][]string
	for _, cas := range d.cases("turns-1000") {
		n := caseValue(cas, "sessions")
		for _, cores := range d.cores["turns-1000"] {
			v := func(metric, rt string) []float64 { return d.values[key{"turns-1000", cas, metric, rt, cores}] }
			tackRate, tackCPU := median(v("turns_per_s", "tack")), median(v("cpu_per_turn", "tack"))
			for _, rt := range runtimes {
				tps := v("turns_per_s", rt.id)
				if len(tps) == 0 && rt.optional {
					continue
				}
				if len(tps) == 0 {
					rows = append(rows, []string{strconv.Itoa(cores), n, rt.name, d.missing("turns-1000", rt.id), "", "", "", "", "", ""})
					continue
				}
				cpu, total := v("cpu_per_turn", rt.id), v("cpu_total", rt.id)
				rr, rc := "–", "–"
				if rt.id != "tack" {
					rr, rc = ratio(tackRate, median(tps)), ratio(tackCPU, median(cpu))
				}
				rows = append(rows, []string{strconv.Itoa(cores), n, rt.name, rate(median(tps)), spread(tps, rate),
					dur(median(cpu)), dur(median(total)), spread(total, dur), rr, rc})
			}
		}
	}
	return table([]string{"cores", "sessions", "runtime", "turns/s (median)", "turns/s min – max", "CPU/turn (median)", "CPU total (median)", "CPU total min – max", "Tack/peer turns/s", "Tack/peer CPU/turn"}, rows)
}

// sseEventsTable: message_delta events per second read over tack
// serve's event streams, with the server's and the clients' CPU per event.
func (d *data) sseEventsTable() string {
	var rows [][]string
	for _, cas := range d.cases("serve-sse") {
		if caseValue(cas, "streams") == "" {
			continue
		}
		v := func(metric string) []float64 { return d.series("serve-sse", cas, metric, "tack", false) }
		eps := v("events_per_s")
		head := []string{caseValue(cas, "store"), caseValue(cas, "sessions"), caseValue(cas, "streams"), caseValue(cas, "chunks")}
		if len(eps) == 0 {
			rows = append(rows, append(head, d.missing("serve-sse", "tack"), "", "", ""))
			continue
		}
		rows = append(rows, append(head, rate(median(eps)), spread(eps, rate),
			dur(median(v("server_cpu_per_event"))), dur(median(v("client_cpu_per_event")))))
	}
	if len(rows) == 0 {
		rows = append(rows, []string{"", d.missing("serve-sse", "tack"), "", "", "", "", "", ""})
	}
	return table([]string{"store", "sessions", "event streams", "chunks each", "events/s (median)", "min – max", "server CPU/event", "client CPU/event"}, rows)
}

// sseAbortTable: from each abort request to agent_abort on its session's
// event stream, against the 100 ms bound.
func (d *data) sseAbortTable() string {
	var rows [][]string
	for _, cas := range d.cases("serve-sse") {
		if caseValue(cas, "chunk_ms") == "" {
			continue
		}
		k := func(metric string) key {
			for _, c := range d.coresOf("serve-sse", cas, metric, "tack") {
				return key{"serve-sse", cas, metric, "tack", c}
			}
			return key{}
		}
		head := []string{caseValue(cas, "store"), caseValue(cas, "sessions"), caseValue(cas, "chunk_ms") + " ms"}
		seen := sorted(d.samples[k("abort_seen")])
		if len(seen) == 0 {
			rows = append(rows, append(head, d.missing("serve-sse", "tack"), "", "", "", "", "", "", "", "", ""))
			continue
		}
		var p99s []float64
		for _, r := range d.rounds[k("abort_seen")] {
			p99s = append(p99s, percentile(sorted(r), 99)*1e3)
		}
		over := 0
		for _, s := range seen {
			if s > abortBound {
				over++
			}
		}
		bound := "met"
		if over > 0 {
			bound = fmt.Sprintf("**not met**: %d of %d over", over, len(seen))
		}
		us := func(s []float64, p float64) string { return dur(percentile(s, p) * 1e3) }
		rows = append(rows, append(head, rate(median(d.values[k("streaming_events_per_s")])),
			us(seen, 50), us(seen, 99), dur(seen[len(seen)-1]*1e3), medianSpread(p99s, dur), strconv.Itoa(len(seen)),
			us(sorted(d.samples[k("abort_published")]), 99), us(sorted(d.samples[k("abort_ended")]), 99),
			us(sorted(d.samples[k("abort_answered")]), 99), bound))
	}
	if len(rows) == 0 {
		rows = append(rows, []string{"", "", "", d.missing("serve-sse", "tack"), "", "", "", "", "", "", "", "", ""})
	}
	return table([]string{"store", "sessions", "a character every", "events/s streamed", "seen p50", "seen p99", "seen max", "p99 of each round: median (min – max, rounds)", "samples", "published p99", "run ended p99", "abort answered p99", "every abort seen within 100 ms"}, rows)
}
