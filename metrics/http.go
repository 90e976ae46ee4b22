package metrics

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Kinds of stream subscribers, the values of tack_stream_subscribers's
// kind label.
const (
	KindSSE  = "sse"  // a Server-Sent Events stream
	KindWS   = "ws"   // a WebSocket
	KindAGUI = "agui" // an AG-UI run's event stream
)

// Instrument wraps the handler of one route: it counts requests by route
// and status code (tack_http_requests_total) and times them
// (tack_http_request_duration_seconds). route is the route's pattern as
// registered with the mux, such as "GET /v1/sessions/{id}", never the
// request's path: ids must not become label values. The wrapped writer
// keeps http.Flusher and http.Hijacker, so streams and WebSockets work
// through it. On a nil *Metrics, Instrument returns h as it is.
func (m *Metrics) Instrument(route string, h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	labels := prometheus.Labels{"route": route}
	timed := promhttp.InstrumentHandlerDuration(m.httpDuration.MustCurryWith(labels), h)
	return promhttp.InstrumentHandlerCounter(m.httpRequests.MustCurryWith(labels), timed)
}

// Subscriber counts one live stream subscriber of kind (KindSSE, KindWS,
// KindAGUI) until the returned function is called; calling it again does
// nothing. A server calls it when a stream opens:
//
//	defer m.Subscriber(metrics.KindSSE)()
//
// On a nil *Metrics it counts nothing.
func (m *Metrics) Subscriber(kind string) (done func()) {
	if m == nil {
		return func() {}
	}
	g := m.subscribers.WithLabelValues(kind)
	g.Inc()
	var once sync.Once
	return func() { once.Do(g.Dec) }
}
