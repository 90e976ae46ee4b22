package metrics_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/tack-run/tack/metrics"
	"github.com/tack-run/tack/metrics/metricstest"
)

// TestInstrumentCountsByRouteAndCode serves a mux over a real HTTP server:
// requests are counted by the route pattern and status code, never by
// path, and timed by route.
func TestInstrumentCountsByRouteAndCode(t *testing.T) {
	m := metrics.New()
	mux := http.NewServeMux()
	const get, post = "GET /v1/sessions/{id}", "POST /v1/sessions"
	mux.Handle(get, m.Instrument(get, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") == "missing" {
			http.Error(w, "no such session", http.StatusNotFound)
			return
		}
		fmt.Fprint(w, "{}") // no WriteHeader: 200
	})))
	mux.Handle(post, m.Instrument(post, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
	})))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	requests := []struct {
		method, path string
		want         int
	}{
		{"GET", "/v1/sessions/s-1", 200},
		{"GET", "/v1/sessions/s-2", 200},
		{"GET", "/v1/sessions/missing", 404},
		{"POST", "/v1/sessions", 201},
	}
	for _, r := range requests {
		req, _ := http.NewRequest(r.method, srv.URL+r.path, nil)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != r.want {
			t.Fatalf("%s %s: %d, want %d", r.method, r.path, res.StatusCode, r.want)
		}
	}

	got := metricstest.Scrape(t, m.Handler())
	want := []string{
		"code=200,route=" + get,
		"code=201,route=" + post,
		"code=404,route=" + get,
	}
	if s := got.Series("tack_http_requests_total"); !slices.Equal(s, want) {
		t.Fatalf("request series %q, want %q", s, want)
	}
	for _, c := range []struct {
		route, code string
		n           float64
	}{{get, "200", 2}, {get, "404", 1}, {post, "201", 1}} {
		if n := got.Value("tack_http_requests_total", "route", c.route, "code", c.code); n != c.n {
			t.Errorf("%s %s: %v requests, want %v", c.route, c.code, n, c.n)
		}
	}
	if n := got.Count("tack_http_request_duration_seconds", "route", get); n != 3 {
		t.Errorf("%s timed %d times, want 3", get, n)
	}
	if n := got.Count("tack_http_request_duration_seconds", "route", post); n != 1 {
		t.Errorf("%s timed %d times, want 1", post, n)
	}
}

// TestInstrumentKeepsStreaming: a stream's handler flushes through the
// wrapped writer, so its client reads each line as it is sent.
func TestInstrumentKeepsStreaming(t *testing.T) {
	m := metrics.New()
	next := make(chan struct{})
	const route = "GET /v1/sessions/{id}/events"
	srv := httptest.NewServer(m.Instrument(route, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := w.(http.Flusher)
		if !ok {
			t.Error("the instrumented writer is no http.Flusher")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 2 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			f.Flush()
			<-next // the client read the line before the next is written
		}
	})))
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL + "/v1/sessions/s-1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := bufio.NewReader(res.Body)
	for i := range 2 {
		line, err := r.ReadString('\n')
		if err != nil || line != fmt.Sprintf("data: %d\n", i) {
			t.Fatalf("line %d: %q, %v", i, line, err)
		}
		_, _ = r.ReadString('\n')
		next <- struct{}{}
	}
	_, _ = io.Copy(io.Discard, r)
	res.Body.Close()
	got := metricstest.Scrape(t, m.Handler())
	if n := got.Value("tack_http_requests_total", "route", route, "code", "200"); n != 1 {
		t.Errorf("stream requests: %v, want 1", n)
	}
}

// TestSubscribersGauge counts live subscribers by kind; ending a
// subscriber twice counts once.
func TestSubscribersGauge(t *testing.T) {
	m := metrics.New()
	check := func(sse, ws, agui float64) {
		t.Helper()
		got := metricstest.Scrape(t, m.Handler())
		for kind, want := range map[string]float64{metrics.KindSSE: sse, metrics.KindWS: ws, metrics.KindAGUI: agui} {
			if n := got.Value("tack_stream_subscribers", "kind", kind); n != want {
				t.Errorf("%s subscribers: %v, want %v", kind, n, want)
			}
		}
	}
	check(0, 0, 0)
	a := m.Subscriber(metrics.KindSSE)
	b := m.Subscriber(metrics.KindSSE)
	w := m.Subscriber(metrics.KindWS)
	g := m.Subscriber(metrics.KindAGUI)
	check(2, 1, 1)
	a()
	a()
	w()
	check(1, 0, 1)
	b()
	g()
	check(0, 0, 0)
}

// TestNilMetrics: a server without metrics passes its handlers through
// and counts nothing.
func TestNilMetrics(t *testing.T) {
	var m *metrics.Metrics
	rec := httptest.NewRecorder()
	m.Instrument("GET /x", http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("nil Instrument: %d, want the handler's 404", rec.Code)
	}
	m.Subscriber(metrics.KindWS)()
}

// TestHandlerServesTextFormat: the scrape holds every tack_ family, with
// its help text, and the Go and process collectors.
func TestHandlerServesTextFormat(t *testing.T) {
	m := metrics.New()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		"# TYPE tack_sessions gauge",
		"# TYPE tack_runs_started_total counter",
		"# TYPE tack_runs_ended_total counter",
		"# TYPE tack_abort_delivery_seconds histogram",
		"# TYPE tack_tokens_total counter",
		"# TYPE tack_store_write_duration_seconds histogram",
		"# TYPE tack_store_write_failures_total counter",
		"# TYPE tack_stream_subscribers gauge",
		`tack_sessions{state="executing_tools"} 0`,
		`tack_tokens_total{type="input"} 0`,
		`tack_runs_ended_total{reason="completed"} 0`,
		"# TYPE go_goroutines gauge",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("the scrape lacks %q", want)
		}
	}
}
