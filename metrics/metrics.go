package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/fsm"
)

// Metrics holds the runtime's metrics in a registry of its own. Make one
// with New.
type Metrics struct {
	reg *prometheus.Registry

	sessions      *prometheus.GaugeVec
	byState       map[fsm.State]prometheus.Gauge
	runsStarted   prometheus.Counter
	runsEnded     *prometheus.CounterVec
	endedBy       map[events.EndReason]prometheus.Counter
	abortDelivery prometheus.Histogram
	tokensIn      prometheus.Counter
	tokensOut     prometheus.Counter
	tools         *prometheus.HistogramVec
	storeWrites   prometheus.Histogram
	storeFailures prometheus.Counter
	httpRequests  *prometheus.CounterVec
	httpDuration  *prometheus.HistogramVec
	subscribers   *prometheus.GaugeVec
}

// *Metrics is what the runtime tells about its sessions.
var _ actors.Observer = (*Metrics)(nil)

// endReasons are the reasons a run ends with that are counted from the
// start, at zero; a plugin's own reasons appear once a run ends with them.
var endReasons = []events.EndReason{
	events.EndCompleted, events.EndAborted, events.EndError, events.EndInterrupted,
	events.EndRejected, events.EndSuperseded, events.EndSkipped,
}

// Buckets of the histograms, in seconds.
var (
	// abortBuckets spans the abort targets of docs/benchmarks.md: well under a millisecond
	// on the actor, 100 ms at worst to a subscriber.
	abortBuckets = []float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1}
	toolBuckets  = []float64{.001, .005, .01, .05, .1, .5, 1, 5, 10, 30, 60, 300}
	storeBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
)

// New returns Metrics in a registry of their own, which also holds the Go
// runtime's and the process's standard collectors (go_*, process_*).
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		sessions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tack_sessions",
			Help: "Sessions loaded in this process, by state.",
		}, []string{"state"}),
		runsStarted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tack_runs_started_total",
			Help: "Runs started (agent_start).",
		}),
		runsEnded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tack_runs_ended_total",
			Help: "Runs ended, by agent_end reason.",
		}, []string{"reason"}),
		abortDelivery: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tack_abort_delivery_seconds",
			Help:    "Time from a session taking up an abort (or a plugin deciding one) to agent_abort being published.",
			Buckets: abortBuckets,
		}),
		tools: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tack_tool_duration_seconds",
			Help:    "Duration of tool calls that ran, by tool and result (ok, error).",
			Buckets: toolBuckets,
		}, []string{"tool", "result"}),
		storeWrites: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tack_store_write_duration_seconds",
			Help:    "Duration of each try at writing a session to the store, failed tries included.",
			Buckets: storeBuckets,
		}),
		storeFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tack_store_write_failures_total",
			Help: "Tries at writing a session to the store that failed.",
		}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tack_http_requests_total",
			Help: "HTTP requests served, by route pattern and status code.",
		}, []string{"route", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tack_http_request_duration_seconds",
			Help:    "Time to serve HTTP requests, by route pattern; a stream counts its whole life.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
		subscribers: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tack_stream_subscribers",
			Help: "Live stream subscribers, by kind (sse, ws, agui).",
		}, []string{"kind"}),
	}
	tokens := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tack_tokens_total",
		Help: "Tokens of model responses, by type (input, output).",
	}, []string{"type"})
	m.tokensIn, m.tokensOut = tokens.WithLabelValues("input"), tokens.WithLabelValues("output")
	m.byState = map[fsm.State]prometheus.Gauge{}
	for _, s := range fsm.States() {
		m.byState[s] = m.sessions.WithLabelValues(string(s))
	}
	m.endedBy = map[events.EndReason]prometheus.Counter{}
	for _, r := range endReasons {
		m.endedBy[r] = m.runsEnded.WithLabelValues(string(r))
	}
	for _, k := range []string{KindSSE, KindWS, KindAGUI} {
		m.subscribers.WithLabelValues(k)
	}
	m.reg.MustRegister(
		m.sessions, m.runsStarted, m.runsEnded, m.abortDelivery, tokens, m.tools,
		m.storeWrites, m.storeFailures, m.httpRequests, m.httpDuration, m.subscribers,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Handler serves the metrics in Prometheus's text format (or another
// format the scraper asks for), for GET /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registerer is the registry the metrics live in, for an embedding program
// that serves metrics of its own beside them.
func (m *Metrics) Registerer() prometheus.Registerer { return m.reg }

// Gatherer is the registry the metrics live in, for what reads them other
// than Handler (package metrics/otlp sends them over OTLP).
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// SessionStarted counts a session that started, idle.
func (m *Metrics) SessionStarted() { m.state(fsm.Idle).Inc() }

// SessionStopped stops counting a session that stopped in state.
func (m *Metrics) SessionStopped(state fsm.State) { m.state(state).Dec() }

// StateChanged moves a session from one state's count to another's.
func (m *Metrics) StateChanged(from, to fsm.State) {
	m.state(from).Dec()
	m.state(to).Inc()
}

// state is the gauge of state s.
func (m *Metrics) state(s fsm.State) prometheus.Gauge {
	if g, ok := m.byState[s]; ok {
		return g
	}
	return m.sessions.WithLabelValues(string(s))
}

// RunStarted counts a run that started.
func (m *Metrics) RunStarted() { m.runsStarted.Inc() }

// RunEnded counts a run that ended with reason.
func (m *Metrics) RunEnded(reason events.EndReason) {
	c, ok := m.endedBy[reason]
	if !ok {
		c = m.runsEnded.WithLabelValues(string(reason))
	}
	c.Inc()
}

// AbortTold records how long agent_abort took to go out.
func (m *Metrics) AbortTold(latency time.Duration) { m.abortDelivery.Observe(latency.Seconds()) }

// Tokens counts the tokens of one model response.
func (m *Metrics) Tokens(in, out int64) {
	m.tokensIn.Add(float64(in))
	m.tokensOut.Add(float64(out))
}

// ToolDone records how long a tool call ran.
func (m *Metrics) ToolDone(name string, d time.Duration, ok bool) {
	result := "ok"
	if !ok {
		result = "error"
	}
	m.tools.WithLabelValues(name, result).Observe(d.Seconds())
}

// StoreWrite records a try at a store write, and counts it if it failed.
func (m *Metrics) StoreWrite(d time.Duration, err error) {
	m.storeWrites.Observe(d.Seconds())
	if err != nil {
		m.storeFailures.Inc()
	}
}
