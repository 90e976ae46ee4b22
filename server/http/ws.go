package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/sync/semaphore"
	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
	"github.com/tack-run/tack/metrics"
	"github.com/tack-run/tack/server/command"
)

// Close reasons the server gives, with their status codes.
const (
	reasonSessionClosed = "session closed"
	reasonShutdown      = "server shutting down"
	reasonNoPong        = "no pong"
)

// reasonBehind is the close reason of a socket that fell too far behind.
func reasonBehind(buffer int) string {
	return fmt.Sprintf("events lost: more than %d events behind; reconnect with ?since=", buffer)
}

// socket serves GET /v1/sessions/{id}/ws: the session's events (the
// replay after since, then live) and the responses to the commands the
// client sends, as text frames. Everything that can fail before the
// upgrade (a bad since, another user's session) is answered as HTTP.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	sub, err := s.follow(r)
	if err != nil {
		writeError(w, err)
		return
	}
	c, err := websocket.Accept(w, r, s.acceptOptions())
	if err != nil {
		sub.close()
		return // Accept answered
	}
	c.SetReadLimit(s.opts.maxBody)
	if !s.sockets.add(c) {
		sub.close()
		_ = c.Close(websocket.StatusGoingAway, reasonShutdown)
		return
	}
	// Deferred in this order, the subscription ends before Serve (which
	// waits for the socket) returns and its owner closes the runtime.
	defer s.sockets.remove(c)
	defer sub.close()
	defer s.stream(metrics.KindWS)()
	// The request's context ends with this handler only: the socket's
	// goroutines get their own, with the request's values (the user).
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	ws := &wsConn{srv: s, c: c, r: r.WithContext(ctx), id: r.PathValue("id"), ahead: semaphore.NewWeighted(s.opts.maxBody),
		ending: make(chan struct{}), answered: make(chan struct{})}
	frames := make(chan wsFrame, commandQueue)
	var wg sync.WaitGroup
	wg.Go(func() { ws.read(ctx, frames); cancel() })
	wg.Go(func() { ws.runAll(ctx, frames) })
	wg.Go(func() { ws.ping(ctx); cancel() })
	ws.write(ctx, sub)
	cancel()
	_ = c.CloseNow() // a no-op after a close handshake
	wg.Wait()
}

// acceptOptions skips the WebSocket library's origin check: guard has
// checked the upgrade already, by the rule every state-changing request
// follows (the trusted origins, or the server's own).
func (s *Server) acceptOptions() *websocket.AcceptOptions {
	return &websocket.AcceptOptions{InsecureSkipVerify: true}
}

// wsConn is one open socket.
type wsConn struct {
	srv *Server
	c   *websocket.Conn
	r   *http.Request // the upgrade, with the socket's context
	id  string        // the session in the path
	// ending is closed once the session has ended, and no command starts
	// after; answered is closed once every command that did is answered,
	// so that a socket whose session closes answers close_session before
	// it closes.
	ending, answered chan struct{}
	// ahead holds the bytes of the frames read and not yet run: at most
	// the body limit (read).
	ahead *semaphore.Weighted
}

// write sends the feed's events until the session closes, the feed falls
// behind, the server drains or ctx ends; it closes the socket with the
// reason.
func (ws *wsConn) write(ctx context.Context, sub *feed) {
	// The reader waits until the server drains as well; a frame being
	// written is not cut short by that.
	wait, cancel := ws.srv.untilDrain(ctx)
	defer cancel()
	var buf []byte
	for {
		ev, err := sub.Next(wait)
		switch {
		case err == io.EOF:
			sub.ended = true
			close(ws.ending)
			<-ws.answered // the response to close_session goes first
			_ = ws.c.Close(websocket.StatusNormalClosure, reasonSessionClosed)
			return
		case err != nil:
			if ws.srv.draining.Err() != nil {
				_ = ws.c.Close(websocket.StatusGoingAway, reasonShutdown)
			}
			return
		}
		buf = eventjson.Append(buf[:0], ev)
		if ws.send(ctx, buf) != nil {
			return
		}
		if sub.behind(ev) {
			_ = ws.c.Close(websocket.StatusPolicyViolation, reasonBehind(ws.srv.opts.eventBuffer))
			return
		}
	}
}

// send writes one text frame; a client that does not take it within the
// stream write timeout is dropped.
func (ws *wsConn) send(ctx context.Context, b []byte) error {
	ctx, cancel := context.WithTimeout(ctx, streamWriteTimeout)
	defer cancel()
	return ws.c.Write(ctx, websocket.MessageText, b)
}

// commandQueue is how many frames a socket reads ahead of the command
// that runs: reading goes on while a command runs, so that pongs are
// read. The frames waiting hold at most the body limit in all
// (wsConn.ahead): a client that sends frames of the largest size while
// its commands wait (its socket unread, their responses not taken) made
// the server hold 65 of them.
const commandQueue = 64

// commandsInFlight is how many of a socket's commands run at once (a
// command.Pipeline): each answer waits for the ones before it to be sent,
// so the answers a client does not read stay in memory, at most this
// many. Two are what an abort needs (the command whose answer waits, and
// the abort); 64 answers of get_messages on a 3.6 MB history held 330 MB.
const commandsInFlight = 4

// wsFrame is a frame the client sent.
type wsFrame struct {
	typ  websocket.MessageType
	data []byte
}

// read reads the client's frames into frames until the socket closes,
// while those waiting to run hold less than the body limit: past it, it
// reads nothing until commands have run, not even pongs, so a client
// whose commands stay stuck is dropped by ping.
func (ws *wsConn) read(ctx context.Context, frames chan<- wsFrame) {
	for {
		typ, data, err := ws.c.Read(ctx)
		if err != nil {
			return
		}
		if ws.ahead.Acquire(ctx, int64(len(data))) != nil {
			return
		}
		select {
		case frames <- wsFrame{typ, data}:
		case <-ctx.Done():
			return
		}
	}
}

// runAll runs the commands of frames, in order, each once the one before
// it has reached the session (a command.Pipeline: an abort does not wait
// for the answer to a prompt the store holds up), and writes their
// responses in order, until the session ends or ctx does. A frame that is
// not a command gets a bad_request response and the socket stays open.
func (ws *wsConn) runAll(ctx context.Context, frames <-chan wsFrame) {
	defer close(ws.answered)
	p := command.NewPipeline(commandsInFlight)
	defer p.Wait()
	for {
		var f wsFrame
		select {
		case f = <-frames:
		case <-ws.ending:
			return
		case <-ctx.Done():
			return
		}
		p.Go(ctx, func(ctx context.Context) func() {
			h, data, err := ws.run(ctx, f.typ, f.data)
			ws.ahead.Release(int64(len(f.data)))
			return func() {
				// Encoded in its turn: the answers waiting hold their data,
				// not a copy in JSON each.
				if ws.send(ctx, command.AppendResponse(nil, h, data, err)) != nil {
					_ = ws.c.CloseNow() // the reader ends, and the socket's goroutines with it
				}
			}
		})
	}
}

// run runs the command in one frame. Every command is about the path's
// session: a frame may leave session out, and one naming another session
// is bad_request. Each command checks the session's owner again, as a
// REST request does. Every frame counts toward requests_per_minute,
// one refused as not a command too.
func (ws *wsConn) run(ctx context.Context, typ websocket.MessageType, frame []byte) (command.Header, proto.Message, error) {
	if e := ws.srv.overLimit(ws.r); e != nil {
		h, _, _ := command.Parse(frame) // for the response's id, when the frame has one
		ws.srv.auditRefused(ws.r, h.Cmd, e.err)
		return h, nil, e.err
	}
	if typ != websocket.MessageText {
		return command.Header{}, nil, protoError(events.CodeBadRequest, "a binary frame is not a command: send commands as JSON in text frames")
	}
	h, obj, err := command.Parse(frame)
	if err != nil {
		return h, nil, err
	}
	if h.Session != "" && h.Session != ws.id {
		return h, nil, protoError(events.CodeBadRequest,
			fmt.Sprintf("this socket is session %q's: \"session\" must be left out or be %q, not %q", ws.id, ws.id, h.Session))
	}
	ctx, cancel := context.WithTimeout(ctx, ws.srv.opts.requestTimeout)
	defer cancel()
	env := command.Env{Runtime: ws.srv.rt, User: userOf(ws.r),
		Use: func(ctx context.Context, sess *tack.Session) error { return ws.srv.owns(ctx, ws.r, sess.ID()) }}
	data, err := command.RunObject(ctx, env, h.Cmd, ws.id, obj)
	var approval string
	_ = json.Unmarshal(obj["approval_id"], &approval)
	ws.srv.auditCommand(ctx, h.Cmd, ws.id, approval, data, err)
	return h, data, err
}

// ping pings the client every keepalive interval, which keeps idle
// sockets open through proxies; a client that has not answered by the
// next interval is dropped.
func (ws *wsConn) ping(ctx context.Context) {
	every := ws.srv.opts.keepAlive
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		pctx, cancel := context.WithTimeout(ctx, every)
		err := ws.c.Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				_ = ws.c.CloseNow() // a peer that does not pong does not read a close frame either
			}
			return
		}
	}
}

// socketSet is the server's open sockets: hijacked connections, which
// http.Server.Shutdown does not wait for.
type socketSet struct {
	mu       sync.Mutex
	conns    map[*websocket.Conn]struct{}
	draining bool
	gone     chan struct{} // closed once draining with no socket left
}

func newSocketSet() *socketSet {
	return &socketSet{conns: map[*websocket.Conn]struct{}{}, gone: make(chan struct{})}
}

// add counts c as open; false once the server drains.
func (ss *socketSet) add(c *websocket.Conn) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.draining {
		return false
	}
	ss.conns[c] = struct{}{}
	return true
}

// remove forgets c, whose handler is done.
func (ss *socketSet) remove(c *websocket.Conn) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.conns, c)
	if ss.draining && len(ss.conns) == 0 {
		close(ss.gone)
	}
}

// drain takes no more sockets.
func (ss *socketSet) drain() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.draining {
		return
	}
	ss.draining = true
	if len(ss.conns) == 0 {
		close(ss.gone)
	}
}

// wait waits, after drain, until every socket's handler is done; when
// ctx ends first it drops the sockets left without a close handshake and
// waits for their handlers.
func (ss *socketSet) wait(ctx context.Context) {
	select {
	case <-ss.gone:
		return
	case <-ctx.Done():
	}
	ss.mu.Lock()
	conns := make([]*websocket.Conn, 0, len(ss.conns))
	for c := range ss.conns {
		conns = append(conns, c)
	}
	ss.mu.Unlock()
	for _, c := range conns {
		_ = c.CloseNow()
	}
	<-ss.gone
}

// open is the number of open sockets.
func (ss *socketSet) open() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.conns)
}
