package http

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack/internal/cputime"
)

// burstSize is how many requests a burst sends at once.
const burstSize = 1000

// BenchmarkRequestBurst measures a burst of 1,000 REST requests sent at
// once, each from a goroutine of its own on a kept-alive connection of
// its own, with the clients in the server's process, on the same cores
// (as tack serve's abort in bench/run has them):
//
//   - handler=plain: net/http with a handler that reads the body and
//     writes {}, the floor any Go server and client pay;
//   - handler=abort: POST /v1/sessions/{id}/abort through the server's
//     handler, to 1,000 idle sessions, one each.
//
// cpu-us/req is the process's CPU time (every thread, client and server)
// per request; max-ms the slowest round trip of the burst. One op is one
// burst.
func BenchmarkRequestBurst(b *testing.B) {
	b.Run("handler=plain", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("{}\n"))
		})}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		url := "http://" + ln.Addr().String() + "/v1/sessions/s/abort"
		burst(b, func(int) string { return url })
	})
	b.Run("handler=abort", func(b *testing.B) {
		ts := start(b, nil)
		ids := make([]string, burstSize)
		for i := range ids {
			ids[i] = fmt.Sprintf("burst-%04d", i)
			ts.must("POST", "/v1/sessions", "", fmt.Sprintf(`{"session":%q,"script":{"turns":[{"text":"hi"}]}}`, ids[i]), 201)
		}
		burst(b, func(i int) string { return ts.url + "/v1/sessions/" + ids[i] + "/abort" })
	})
}

// burst sends burstSize POSTs of {} to url(i) once to open the
// connections, then once per op all at once, and reports the CPU per
// request and the slowest round trip.
func burst(b *testing.B, url func(i int) string) {
	if _, ok := cputime.Process(); !ok {
		b.Skip("this platform does not tell a process's CPU time")
	}
	c := loadClient()
	c.Transport.(*http.Transport).MaxIdleConnsPerHost = burstSize
	defer c.CloseIdleConnections()
	post := func(i int) {
		res, err := c.Post(url(i), "application/json", strings.NewReader("{}"))
		if err != nil {
			b.Error(err)
			return
		}
		_, _ = io.ReadAll(res.Body) // to the end, so that the connection is kept
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Errorf("POST %s: %s", url(i), res.Status)
		}
	}
	var wg sync.WaitGroup
	for i := range burstSize {
		wg.Go(func() { post(i) })
	}
	wg.Wait()
	var cpu, slowest time.Duration
	for b.Loop() {
		b.StopTimer()
		start := make(chan struct{})
		took := make([]time.Duration, burstSize)
		for i := range burstSize {
			wg.Go(func() {
				<-start
				t0 := time.Now()
				post(i)
				took[i] = time.Since(t0)
			})
		}
		time.Sleep(50 * time.Millisecond) // every sender waiting at start
		b.StartTimer()
		cpu0, _ := cputime.Process()
		close(start)
		wg.Wait()
		cpu1, _ := cputime.Process()
		cpu += cpu1 - cpu0
		for _, d := range took {
			slowest = max(slowest, d)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*burstSize), "cpu-us/req")
	b.ReportMetric(float64(slowest)/float64(time.Millisecond), "max-ms")
}
