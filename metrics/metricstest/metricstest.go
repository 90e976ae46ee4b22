package metricstest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scraped is one scrape's metric families, by name.
type Scraped struct {
	t        testing.TB
	Families map[string]*dto.MetricFamily
}

// Scrape asks h for GET /metrics as Prometheus does and parses the text
// format it answers with; it fails t if the answer is not 200 in that
// format.
func Scrape(t testing.TB, h http.Handler) Scraped {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET /metrics: Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	return Scraped{t: t, Families: fams}
}

// Value is the value of a counter or gauge series: the metric called name
// with exactly the labels given as name, value pairs.
func (s Scraped) Value(name string, labels ...string) float64 {
	s.t.Helper()
	m := s.series(name, labels)
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	s.t.Fatalf("%s%v is neither a counter nor a gauge", name, labels)
	return 0
}

// Count is the number of observations of a histogram series.
func (s Scraped) Count(name string, labels ...string) uint64 {
	s.t.Helper()
	m := s.series(name, labels)
	if m.Histogram == nil {
		s.t.Fatalf("%s%v is not a histogram", name, labels)
	}
	return m.Histogram.GetSampleCount()
}

// Series lists the label sets of metric name, each as "k=v,k=v" sorted by
// label name, sorted: for asserting that no other series exists.
func (s Scraped) Series(name string) []string {
	var out []string
	for _, m := range s.Families[name].GetMetric() {
		var kv []string
		for _, l := range m.GetLabel() {
			kv = append(kv, l.GetName()+"="+l.GetValue())
		}
		slices.Sort(kv)
		out = append(out, strings.Join(kv, ","))
	}
	slices.Sort(out)
	return out
}

// series finds the series of name with exactly labels.
func (s Scraped) series(name string, labels []string) *dto.Metric {
	s.t.Helper()
	if len(labels)%2 != 0 {
		s.t.Fatalf("%s: labels %v are not name, value pairs", name, labels)
	}
	fam, ok := s.Families[name]
	if !ok {
		s.t.Fatalf("no metric %s in the scrape", name)
	}
	for _, m := range fam.GetMetric() {
		if matches(m.GetLabel(), labels) {
			return m
		}
	}
	s.t.Fatalf("no series %s%v in the scrape; it has %v", name, labels, s.Series(name))
	return nil
}

// matches reports whether got is exactly the label pairs want.
func matches(got []*dto.LabelPair, want []string) bool {
	if len(got) != len(want)/2 {
		return false
	}
	for i := 0; i < len(want); i += 2 {
		if !slices.ContainsFunc(got, func(l *dto.LabelPair) bool {
			return l.GetName() == want[i] && l.GetValue() == want[i+1]
		}) {
			return false
		}
	}
	return true
}
