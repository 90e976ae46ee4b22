package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tack-run/tack/bench/internal/measure"
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
	{"eino", "Eino", false},
	{"eino-react", "Eino flow/agent/react", true},
	{"pi", "pi-agent-core", false},
}

// key identifies one series: a metric of one runtime in one case.
type key struct {
	scenario, cas, metric, runtime string
	cores                          int
}

// data is the drivers' records grouped into series.
type data struct {
	// values holds the scalar measurements of a series, one per driver run.
	values map[key][]float64
	// samples pools the distributions of a series over every run; rounds
	// keeps them apart, one per record.
	samples map[key][]float64
	rounds  map[key][][]float64
	// unsupported says why a runtime cannot do a scenario.
	unsupported map[string]string // scenario/runtime
	meta        []measure.Record
	// cores lists, per turn-overhead scenario, the core counts it ran on.
	cores map[string][]int
}

func newData(recs []measure.Record) *data {
	d := &data{values: map[key][]float64{}, samples: map[key][]float64{}, rounds: map[key][][]float64{}, unsupported: map[string]string{}, cores: map[string][]int{}}
	for _, r := range recs {
		switch {
		case r.Meta != nil:
			d.meta = append(d.meta, r)
			continue
		case r.Unsupported != "":
			d.unsupported[r.Scenario+"/"+r.Runtime] = r.Unsupported
			continue
		}
		k := key{r.Scenario, r.Case, r.Metric, r.Runtime, r.Cores}
		if r.Value != nil {
			d.values[k] = append(d.values[k], *r.Value)
		}
		if len(r.Samples) > 0 {
			d.samples[k] = append(d.samples[k], r.Samples...)
			d.rounds[k] = append(d.rounds[k], r.Samples)
		}
		if cs := d.cores[r.Scenario]; (r.Scenario == "turns" || r.Scenario == "http-turns") && !slices.Contains(cs, r.Cores) {
			d.cores[r.Scenario] = append(cs, r.Cores)
		}
	}
	for _, cs := range d.cores {
		slices.Sort(cs)
	}
	return d
}

// cases lists the cases of scenario, in a natural order (numbers by value).
func (d *data) cases(scenario string) []string {
	var out []string
	for k := range d.values {
		if k.scenario == scenario && !slices.Contains(out, k.cas) {
			out = append(out, k.cas)
		}
	}
	for k := range d.samples {
		if k.scenario == scenario && !slices.Contains(out, k.cas) {
			out = append(out, k.cas)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return compareCases(a, b) })
	return out
}

// compareCases orders "sessions=100 tool=none" before "sessions=1000
// tool=none": field by field, numbers by value.
func compareCases(a, b string) int {
	fa, fb := strings.Fields(a), strings.Fields(b)
	for i := 0; i < len(fa) && i < len(fb); i++ {
		if fa[i] == fb[i] {
			continue
		}
		_, va, _ := strings.Cut(fa[i], "=")
		_, vb, _ := strings.Cut(fb[i], "=")
		na, ea := strconv.ParseFloat(va, 64)
		nb, eb := strconv.ParseFloat(vb, 64)
		if ea == nil && eb == nil {
			return cmp.Compare(na, nb)
		}
		return strings.Compare(fa[i], fb[i])
	}
	return len(fa) - len(fb)
}

func caseValue(cas, name string) string {
	for _, f := range strings.Fields(cas) {
		if k, v, ok := strings.Cut(f, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// percentile returns the p-th percentile (nearest rank) of sorted.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func sorted(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// median returns the median of xs (the mean of the middle two when even).
func median(xs []float64) float64 {
	s := sorted(xs)
	n := len(s)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return s[n/2]
	default:
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// ratio formats a/b: Tack's figure over a peer's.
func ratio(a, b float64) string {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return "–"
	}
	r := a / b
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f", r)
	case r >= 10:
		return fmt.Sprintf("%.1f", r)
	case r >= 0.01:
		return fmt.Sprintf("%.2f", r)
	default:
		return fmt.Sprintf("%.4f", r)
	}
}

// dur formats a duration given in ns.
func dur(ns float64) string {
	switch {
	case math.IsNaN(ns):
		return "–"
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e4:
		return fmt.Sprintf("%.0f µs", ns/1e3)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	default:
		return fmt.Sprintf("%.0f ns", ns)
	}
}

func bytesFmt(b float64) string {
	switch {
	case math.IsNaN(b):
		return "–"
	case math.Abs(b) >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case math.Abs(b) >= 1<<10:
		return fmt.Sprintf("%.2f KiB", b/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", b)
	}
}

func rate(r float64) string {
	switch {
	case math.IsNaN(r):
		return "–"
	case r >= 1e6:
		return fmt.Sprintf("%.2f M/s", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.0f k/s", r/1e3)
	default:
		return fmt.Sprintf("%.0f /s", r)
	}
}

// spread formats the min – max of xs with f, and how many there are.
func spread(xs []float64, f func(float64) string) string {
	if len(xs) == 0 {
		return "–"
	}
	s := sorted(xs)
	return fmt.Sprintf("%s – %s (n=%d)", f(s[0]), f(s[len(s)-1]), len(s))
}

// medianSpread formats the median of xs, then their min – max and count.
func medianSpread(xs []float64, f func(float64) string) string {
	if len(xs) == 0 {
		return "–"
	}
	s := sorted(xs)
	return fmt.Sprintf("%s (%s – %s, n=%d)", f(median(s)), f(s[0]), f(s[len(s)-1]), len(s))
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

func (d *data) missing(scenario, rt string) string {
	if why := d.unsupported[scenario+"/"+rt]; why != "" {
		return "not supported: " + why
	}
	return "no data (the driver failed?)"
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
		for _, rt := range runtimes {
			seen, ended := sorted(d.samples[k("abort_seen", rt.id)]), sorted(d.samples[k("abort_ended", rt.id)])
			if len(seen) == 0 && rt.optional {
				continue
			}
			if len(seen) == 0 {
				rows = append(rows, []string{n, rt.name, d.missing("abort", rt.id), "", "", "", "", "", "", ""})
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
			r50, r99 := "–", "–"
			if rt.id != "tack" {
				r50, r99 = ratio(percentile(tack, 50), percentile(seen, 50)), ratio(percentile(tack, 99), percentile(seen, 99))
			}
			us := func(p float64) string { return dur(percentile(seen, p) * 1e3) }
			rows = append(rows, []string{n, rt.name, us(50), us(99), dur(seen[len(seen)-1] * 1e3),
				medianSpread(p99s, dur), strconv.Itoa(len(seen)),
				dur(percentile(ended, 99) * 1e3), r50, r99})
		}
	}
	return table([]string{"sessions", "runtime", "seen p50", "seen p99", "seen max", "p99 of each round: median (min – max, rounds)", "samples", "run ended p99", "Tack/peer p50", "Tack/peer p99"}, rows)
}

// coresOf lists the core counts a series was measured on.
func (d *data) coresOf(scenario, cas, metric, rt string) []int {
	var out []int
	for k := range d.samples {
		if k.scenario == scenario && k.cas == cas && k.metric == metric && k.runtime == rt {
			out = append(out, k.cores)
		}
	}
	for k := range d.values {
		if k.scenario == scenario && k.cas == cas && k.metric == metric && k.runtime == rt && !slices.Contains(out, k.cores) {
			out = append(out, k.cores)
		}
	}
	slices.Sort(out)
	return out
}

func (d *data) series(scenario, cas, metric, rt string, pooled bool) []float64 {
	for _, c := range d.coresOf(scenario, cas, metric, rt) {
		if pooled {
			return d.samples[key{scenario, cas, metric, rt, c}]
		}
		return d.values[key{scenario, cas, metric, rt, c}]
	}
	return nil
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

// idleTable: heap and RSS per idle session.
func (d *data) idleTable() string {
	var rows [][]string
	for _, cas := range d.cases("idle") {
		n := caseValue(cas, "agents")
		v := func(metric, rt string) []float64 { return d.series("idle", cas, metric, rt, false) }
		th, tr := median(v("heap_per_agent", "tack")), median(v("rss_per_agent", "tack"))
		for _, rt := range runtimes {
			heap, rss, create := v("heap_per_agent", rt.id), v("rss_per_agent", rt.id), v("create_per_agent", rt.id)
			if len(heap) == 0 && rt.optional {
				continue
			}
			if len(heap) == 0 {
				rows = append(rows, []string{n, rt.name, d.missing("idle", rt.id), "", "", "", "", "", ""})
				continue
			}
			rh, rr := "–", "–"
			if !strings.HasPrefix(rt.id, "tack") {
				rh, rr = ratio(th, median(heap)), ratio(tr, median(rss))
			}
			rows = append(rows, []string{n, rt.name, bytesFmt(median(heap)), spread(heap, bytesFmt),
				bytesFmt(median(rss)), spread(rss, bytesFmt), dur(median(create)), rh, rr})
		}
	}
	return table([]string{"sessions", "runtime", "heap/session", "heap min – max", "RSS/session", "RSS min – max", "create/session", "Tack/peer heap", "Tack/peer RSS"}, rows)
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
