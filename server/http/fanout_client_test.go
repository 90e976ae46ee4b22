package http

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// loadClient returns a client whose transport keeps enough idle
// connections for a round's concurrent requests, and never uses a proxy.
func loadClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConns = 0
	tr.MaxIdleConnsPerHost = 1024
	return &http.Client{Transport: tr}
}

// fanoutSub is one subscriber: an event stream and its reader's
// findings.
type fanoutSub struct {
	s       *stream
	session int
	deltas  atomic.Int64
	// abortAt is when the reader read agent_abort, since the round's
	// base. It and published are read once the reader has marked
	// aborted; err, why the stream failed, once the reader is done.
	abortAt time.Duration
	// published is the time the session put on agent_abort.
	published time.Time
	err       error
}

// read reads the stream until it ends, marking streaming done at the
// first message_delta and aborted at agent_abort (or both when the
// stream fails first).
func (sub *fanoutSub) read(base time.Time, failed *atomic.Int64, streaming, aborted *sync.WaitGroup) {
	text, abort := false, false
	defer func() {
		if sub.err != nil {
			failed.Add(1)
		}
		if !text {
			streaming.Done()
		}
		if !abort {
			aborted.Done()
		}
	}()
	for {
		m, err := sub.s.next()
		if err != nil {
			// The round closes the sessions after the aborts, which ends
			// the streams.
			if !abort || !errors.Is(err, io.EOF) {
				sub.err = fmt.Errorf("stream of session %d: %w", sub.session, err)
			}
			return
		}
		switch m.event {
		case "message_delta":
			sub.deltas.Add(1)
			if !text {
				text = true
				streaming.Done()
			}
		case "agent_abort":
			if !abort {
				sub.abortAt = time.Since(base)
				var ev struct {
					TS time.Time `json:"ts"`
				}
				if err := json.Unmarshal([]byte(m.data), &ev); err != nil {
					sub.err = fmt.Errorf("agent_abort of session %d: %w", sub.session, err)
					return
				}
				sub.published = ev.TS
				abort = true
				aborted.Done()
			}
		case "events_lost":
			sub.err = fmt.Errorf("stream of session %d fell behind: %s", sub.session, m.data)
			return
		}
	}
}

// post sends body to path and wants 200.
func (ts *testServer) post(path, body string) error {
	req, err := http.NewRequest("POST", ts.url+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	// The harness's POSTs (prompt, abort) go on pooled keep-alive
	// connections; under CI load one came back EOF, a connection closed
	// before it was answered. With an idempotency key the transport sends
	// such a request again on a fresh connection, as it does for a GET;
	// a prompt or abort whose first copy reached no handler is done once.
	req.Header.Set("Idempotency-Key", path)
	res, err := ts.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("POST %s: %d %s", path, res.StatusCode, b)
	}
	return err
}

// each runs f(i) for i in [0, n) on n goroutines released together, and
// returns their errors joined.
func each(n int, f func(i int) error) error {
	errs := make([]error, n)
	release := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-release
			errs[i] = f(i)
		})
	}
	close(release)
	wg.Wait()
	return errors.Join(errs...)
}

// waitFor waits for wg up to d.
func waitFor(wg *sync.WaitGroup, d time.Duration) bool {
	c := make(chan struct{})
	go func() { wg.Wait(); close(c) }()
	select {
	case <-c:
		return true
	case <-time.After(d):
		return false
	}
}
