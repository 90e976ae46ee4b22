package main

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/tack-run/tack/bench/internal/measure"
)

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
	// cores lists, per turn scenario (turns, http-turns, turns-1000), the
	// core counts it ran on.
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
		if cs := d.cores[r.Scenario]; (r.Scenario == "turns" || r.Scenario == "http-turns" || r.Scenario == "turns-1000") && !slices.Contains(cs, r.Cores) {
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

func (d *data) missing(scenario, rt string) string {
	if why := d.unsupported[scenario+"/"+rt]; why != "" {
		return "not supported: " + why
	}
	return "no data (the driver failed?)"
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
