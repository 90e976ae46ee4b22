package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// runtimes in table order, with the names the tables show. An optional
// runtime has rows only where it has figures (eino-react runs the turn
// overhead only).
var runtimes = []struct {
	id, name string
	optional bool
}{
	{"tack", "Tack", false},
	{"tack-passivated", "Tack, passivated (SQLite)", true},
	{"tack-passivated-memory", "Tack, parked (no store: in memory)", true},
	{"eino", "Eino", false},
	{"eino-react", "Eino flow/agent/react", true},
	{"pi", "pi-agent-core", false},
}

// table renders a markdown table.
func table(header []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for _, h := range header {
		if strings.HasPrefix(h, "runtime") || h == "" {
			b.WriteString("---|")
		} else {
			b.WriteString("--:|")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

// turnsTable: CPU and wall time per turn of scenario (turns or
// http-turns), per core count.
func (d *data) turnsTable(scenario string) string {
	var rows [][]string
	for _, cores := range d.cores[scenario] {
		v := func(metric, rt string) []float64 { return d.values[key{scenario, "", metric, rt, cores}] }
		tackCPU, tackWall := median(v("cpu_per_turn", "tack")), median(v("wall_per_turn", "tack"))
		for _, rt := range runtimes {
			cpu, wall := v("cpu_per_turn", rt.id), v("wall_per_turn", rt.id)
			if len(cpu) == 0 && rt.optional {
				continue
			}
			if len(cpu) == 0 {
				rows = append(rows, []string{strconv.Itoa(cores), rt.name, d.missing(scenario, rt.id), "", "", "", "", ""})
				continue
			}
			rc, rw := "–", "–"
			if rt.id != "tack" {
				rc, rw = ratio(tackCPU, median(cpu)), ratio(tackWall, median(wall))
			}
			rows = append(rows, []string{strconv.Itoa(cores), rt.name,
				dur(median(cpu)), spread(cpu, dur), dur(median(wall)), spread(wall, dur), rc, rw})
		}
	}
	return table([]string{"cores", "runtime", "CPU/turn (median)", "CPU min – max", "wall/turn (median)", "wall min – max", "Tack/peer CPU", "Tack/peer wall"}, rows)
}

// latencyRow renders pooled latency samples (µs): p50, IQR, p99, max.
func latencyRow(us []float64) []string {
	s := sorted(us)
	f := func(p float64) string { return dur(percentile(s, p) * 1e3) }
	return []string{f(50), f(25) + " – " + f(75), f(99), dur(s[len(s)-1] * 1e3), strconv.Itoa(len(s))}
}

// abortTable: delivery latency of an abort, per number of sessions.
func (d *data) abortTable(tool string) string {
	var rows [][]string
	for _, cas := range d.cases("abort") {
		if caseValue(cas, "tool") != tool {
			continue
		}
		n := caseValue(cas, "sessions")
		k := func(metric, rt string) key {
			for _, c := range d.coresOf("abort", cas, metric, rt) {
				return key{"abort", cas, metric, rt, c}
			}
			return key{}
		}
		tack := sorted(d.samples[k("abort_seen", "tack")])
		var tackFirsts []float64
		for _, rt := range runtimes {
			seen, ended := sorted(d.samples[k("abort_seen", rt.id)]), sorted(d.samples[k("abort_ended", rt.id)])
			if len(seen) == 0 && rt.optional {
				continue
			}
			if len(seen) == 0 {
				rows = append(rows, []string{n, rt.name, d.missing("abort", rt.id), "", "", "", "", "", "", "", "", ""})
				continue
			}
			// The p99 of each round shows a round that a stall of the
			// machine delayed as a whole.
			var p99s []float64
			for _, r := range d.rounds[k("abort_seen", rt.id)] {
				if len(r) >= 100 {
					p99s = append(p99s, percentile(sorted(r), 99)*1e3)
				}
			}
			// A process's first burst, reported apart: the p99 of
			// each process's first round.
			var firsts []float64
			for _, r := range d.rounds[k("first_abort_seen", rt.id)] {
				firsts = append(firsts, percentile(sorted(r), 99)*1e3)
			}
			r50, r99, rFirst := "–", "–", "–"
			if rt.id != "tack" {
				r50, r99 = ratio(percentile(tack, 50), percentile(seen, 50)), ratio(percentile(tack, 99), percentile(seen, 99))
				rFirst = ratio(median(tackFirsts), median(firsts))
			} else {
				tackFirsts = firsts
			}
			us := func(p float64) string { return dur(percentile(seen, p) * 1e3) }
			rows = append(rows, []string{n, rt.name, us(50), us(99), dur(seen[len(seen)-1] * 1e3),
				medianSpread(p99s, dur), strconv.Itoa(len(seen)),
				dur(percentile(ended, 99) * 1e3), r50, r99, medianSpread(firsts, dur), rFirst})
		}
	}
	return table([]string{"sessions", "runtime", "seen p50", "seen p99", "seen max", "p99 of each round: median (min – max, rounds)", "samples", "run ended p99", "Tack/peer p50", "Tack/peer p99", "first round's p99: median (min – max, processes)", "Tack/peer first round"}, rows)
}

// steerTable: time from steer to the next model request holding it.
func (d *data) steerTable() string {
	var rows [][]string
	tack := sorted(d.series("steer", "", "steer_to_request", "tack", true))
	for _, rt := range runtimes {
		s := d.series("steer", "", "steer_to_request", rt.id, true)
		if len(s) == 0 && rt.optional {
			continue
		}
		if len(s) == 0 {
			rows = append(rows, []string{rt.name, d.missing("steer", rt.id), "", "", "", "", ""})
			continue
		}
		r := "–"
		if rt.id != "tack" {
			r = ratio(percentile(tack, 50), percentile(sorted(s), 50))
		}
		rows = append(rows, append(append([]string{rt.name}, latencyRow(s)...), r))
	}
	return table([]string{"runtime", "p50", "IQR", "p99", "max", "samples", "Tack/peer p50"}, rows)
}

// idleTable: heap and RSS per idle session, and the wake-up of a
// passivated one. A peer's ratios are to a live Tack session and, where
// that size ran passivated into memory, to the compact record an idle
// session becomes.
func (d *data) idleTable() string {
	var rows [][]string
	for _, cas := range d.cases("idle") {
		n := caseValue(cas, "agents")
		v := func(metric, rt string) []float64 { return d.series("idle", cas, metric, rt, false) }
		ratios := func(metric string, peer float64) string {
			r := ratio(median(v(metric, "tack")), peer)
			if parked := v(metric, "tack-passivated-memory"); len(parked) > 0 {
				r += " live, " + ratio(median(parked), peer) + " passivated"
			}
			return r
		}
		for _, rt := range runtimes {
			heap, rss, create := v("heap_per_agent", rt.id), v("rss_per_agent", rt.id), v("create_per_agent", rt.id)
			if len(heap) == 0 && rt.optional {
				continue
			}
			if len(heap) == 0 {
				rows = append(rows, []string{n, rt.name, d.missing("idle", rt.id), "", "", "", "", "", "", ""})
				continue
			}
			rh, rr := "–", "–"
			if !strings.HasPrefix(rt.id, "tack") {
				rh, rr = ratios("heap_per_agent", median(heap)), ratios("rss_per_agent", median(rss))
			}
			rows = append(rows, []string{n, rt.name, bytesFmt(median(heap)), spread(heap, bytesFmt),
				bytesFmt(median(rss)), spread(rss, bytesFmt), dur(median(create)), dur(median(v("wake_per_agent", rt.id))), rh, rr})
		}
	}
	return table([]string{"sessions", "runtime", "heap/session", "heap min – max", "RSS/session", "RSS min – max", "create/session", "wake/session", "Tack/peer heap", "Tack/peer RSS"}, rows)
}

// throughputTable: events per second delivered to the subscribers.
func (d *data) throughputTable() string {
	var rows [][]string
	for _, cas := range d.cases("throughput") {
		n := caseValue(cas, "subscribers")
		v := func(metric, rt string) []float64 { return d.series("throughput", cas, metric, rt, false) }
		tack := median(v("events_per_s", "tack"))
		for _, rt := range runtimes {
			eps := v("events_per_s", rt.id)
			if len(eps) == 0 && rt.optional {
				continue
			}
			if len(eps) == 0 {
				rows = append(rows, []string{n, rt.name, d.missing("throughput", rt.id), "", "", ""})
				continue
			}
			r := "–"
			if rt.id != "tack" {
				r = ratio(tack, median(eps))
			}
			lost := "–"
			if l := v("lost", rt.id); len(l) > 0 {
				lost = fmt.Sprintf("%.0f", slices.Max(l))
			}
			rows = append(rows, []string{n, rt.name, rate(median(eps)), spread(eps, rate), lost, r})
		}
	}
	return table([]string{"subscribers", "runtime", "events/s (median)", "min – max", "lost (max)", "Tack/peer"}, rows)
}
