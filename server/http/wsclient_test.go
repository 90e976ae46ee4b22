package http

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	nethttp "net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsClient is a WebSocket client of the test server that reads every
// frame into frames, so that it answers pings.
type wsClient struct {
	t      testing.TB
	c      *websocket.Conn
	frames chan string
	done   chan struct{}
	err    error   // why reading ended, once done is closed
	later  []wsMsg // events response read past, for msg
}

// dialWS opens path as a WebSocket with token (none when empty); with
// read it starts reading at once.
func (ts *testServer) dialWS(url, token string, read bool, opts *websocket.DialOptions) *wsClient {
	ts.t.Helper()
	if opts == nil {
		opts = &websocket.DialOptions{}
	}
	if token != "" {
		opts.HTTPHeader = nethttp.Header{"Authorization": {"Bearer " + token}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, res, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		ts.t.Fatalf("dial %s: %v (%+v)", url, err, res)
	}
	wc := &wsClient{t: ts.t, c: c, frames: make(chan string, 4096), done: make(chan struct{})}
	ts.t.Cleanup(func() { _ = c.CloseNow(); wc.wait() })
	if read {
		wc.read()
	} else {
		close(wc.done)
	}
	return wc
}

// ws opens a WebSocket on the test server and reads it.
func (ts *testServer) ws(path, token string) *wsClient {
	ts.t.Helper()
	return ts.dialWS("ws"+strings.TrimPrefix(ts.url, "http")+path, token, true, nil)
}

func (wc *wsClient) read() {
	go func() {
		defer close(wc.done)
		for {
			typ, b, err := wc.c.Read(context.Background())
			if err != nil {
				wc.err = err
				return
			}
			if typ != websocket.MessageText {
				wc.err = errors.New("a binary frame")
				return
			}
			wc.frames <- string(b)
		}
	}()
}

// wait waits until reading ended.
func (wc *wsClient) wait() {
	select {
	case <-wc.done:
	case <-time.After(10 * time.Second):
		wc.t.Error("the socket did not end")
	}
}

// send writes one text frame.
func (wc *wsClient) send(frame string) {
	wc.t.Helper()
	wc.sendType(websocket.MessageText, frame)
}

func (wc *wsClient) sendType(typ websocket.MessageType, frame string) {
	wc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := wc.c.Write(ctx, typ, []byte(frame)); err != nil {
		wc.t.Fatalf("write %s: %v", frame, err)
	}
}

// next is the next frame.
func (wc *wsClient) next() string {
	wc.t.Helper()
	select {
	case f := <-wc.frames:
		return f
	case <-wc.done:
		select {
		case f := <-wc.frames:
			return f
		default:
		}
		wc.t.Fatalf("the socket ended: %v", wc.err)
	case <-time.After(5 * time.Second):
		wc.t.Fatal("no frame for 5 s")
	}
	return ""
}

// wsFrameOf is a frame decoded.
type wsMsg struct {
	raw  string
	Type string          `json:"type"`
	Seq  uint64          `json:"seq"`
	ID   json.RawMessage `json:"id"`
}

func (wc *wsClient) msg() wsMsg {
	wc.t.Helper()
	if len(wc.later) > 0 {
		m := wc.later[0]
		wc.later = wc.later[1:]
		return m
	}
	m := wsMsg{raw: wc.next()}
	if err := json.Unmarshal([]byte(m.raw), &m); err != nil {
		wc.t.Fatalf("frame %s: %v", m.raw, err)
	}
	return m
}

// until reads frames up to the first whose raw text holds s, and
// returns the events read before and with it.
func (wc *wsClient) until(s string) []wsMsg {
	wc.t.Helper()
	var out []wsMsg
	for {
		m := wc.msg()
		out = append(out, m)
		if strings.Contains(m.raw, s) {
			return out
		}
	}
}

// response reads frames up to the response with id (a JSON value) and
// returns it; msg returns the events it read past.
func (wc *wsClient) response(id string) string {
	wc.t.Helper()
	var events []wsMsg
	defer func() { wc.later = append(events, wc.later...) }()
	for {
		m := wc.msg()
		if m.Type == "response" && string(m.ID) == id {
			return m.raw
		}
		if m.Type == "response" {
			wc.t.Fatalf("response %s while waiting for id %s", m.raw, id)
		}
		events = append(events, m)
	}
}

// ended waits until the server closed the socket and returns its close
// status and reason.
func (wc *wsClient) ended() (websocket.StatusCode, string) {
	wc.t.Helper()
	for {
		select {
		case <-wc.frames:
			continue
		case <-wc.done:
		case <-time.After(10 * time.Second):
			wc.t.Fatal("the socket stayed open")
		}
		break
	}
	var ce websocket.CloseError
	if !errors.As(wc.err, &ce) {
		return -1, wc.err.Error()
	}
	return ce.Code, ce.Reason
}

// dropped reads what is left: true when the connection is gone.
func (wc *wsClient) dropped() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	for {
		if _, _, err := wc.c.Read(ctx); err != nil {
			return ctx.Err() == nil
		}
	}
}

// idleProxy forwards TCP connections to addr and cuts each one that
// carries no byte either way for idle. It returns its address.
func idleProxy(t *testing.T, addr string, idle time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", addr)
			if err != nil {
				_ = down.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, down, up)
			mu.Unlock()
			cut := func() { _ = down.Close(); _ = up.Close() }
			timer := time.AfterFunc(idle, cut)
			var closed atomic.Bool
			pipe := func(dst, src net.Conn) {
				buf := make([]byte, 32<<10)
				for {
					n, err := src.Read(buf)
					if n > 0 {
						timer.Reset(idle)
						if _, werr := dst.Write(buf[:n]); werr != nil {
							err = werr
						}
					}
					if err != nil {
						if !closed.Swap(true) {
							timer.Stop()
							cut()
						}
						return
					}
				}
			}
			wg.Go(func() { pipe(up, down) })
			wg.Go(func() { pipe(down, up) })
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}
