package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/server/command"
)

// maxLine bounds one command line.
const maxLine = 16 << 20

// eventBuffer is each session subscription's capacity.
const eventBuffer = 8192

// Serve runs the protocol until in ends or ctx is done. It closes the
// sessions it created before returning.
func Serve(ctx context.Context, rt *tack.Runtime, in io.Reader, out io.Writer) error {
	c := &conn{rt: rt, out: &writer{w: bufio.NewWriter(out)}, subs: map[string]*tack.Subscription{}}
	defer c.close()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if line := sc.Bytes(); len(line) > 0 {
			c.handle(ctx, line)
		}
	}
	return sc.Err()
}

// conn is one client's connection.
type conn struct {
	rt   *tack.Runtime
	out  *writer
	mu   sync.Mutex
	subs map[string]*tack.Subscription
	wg   sync.WaitGroup
}

// header is the part every command line has.
type header struct {
	Cmd     string          `json:"cmd"`
	ID      json.RawMessage `json:"id"`
	Session *string         `json:"session"`
}

// handle runs one command line and writes its response.
func (c *conn) handle(ctx context.Context, line []byte) {
	var h header
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		c.out.response(h, nil, &tack.Error{Code: events.CodeBadRequest, Message: "not a JSON object: " + err.Error()})
		return
	}
	if err := json.Unmarshal(line, &h); err != nil {
		c.out.response(h, nil, &tack.Error{Code: events.CodeBadRequest, Message: err.Error()})
		return
	}
	if h.Cmd == "" {
		c.out.response(h, nil, badRequest(`unknown command ""`))
		return
	}
	// The command's own fields are the line's, but for the keys every
	// line has.
	delete(fields, "cmd")
	delete(fields, "id")
	delete(fields, "session")
	body, _ := json.Marshal(fields) // raw values always marshal
	id := ""
	if h.Session != nil {
		id = *h.Session
	}
	data, err := command.Run(ctx, command.Env{Runtime: c.rt, Use: c.follow, Closed: c.forget}, h.Cmd, id, body)
	c.out.response(h, data, err)
}

// follow forwards a session's events to the output, from the first one
// still buffered, unless the connection does already: the sessions it
// creates, and stored ones it restores by using them.
func (c *conn) follow(ctx context.Context, s *tack.Session) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.subs[s.ID()]; ok {
		return nil
	}
	sub, err := s.Subscribe(ctx, tack.SubscribeOptions{Buffer: eventBuffer, Buffered: true})
	if err != nil {
		return err
	}
	c.subs[s.ID()] = sub
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for ev := range sub.C {
			c.out.event(ev)
		}
	}()
	return nil
}

// forget ends the forwarding of a closed session's events.
func (c *conn) forget(id string) {
	c.mu.Lock()
	delete(c.subs, id)
	c.mu.Unlock()
}

// close closes the sessions this connection created and waits until their
// last events are written.
func (c *conn) close() {
	c.mu.Lock()
	ids := make([]string, 0, len(c.subs))
	for id := range c.subs {
		ids = append(ids, id)
	}
	c.subs = map[string]*tack.Subscription{}
	c.mu.Unlock()
	for _, id := range ids {
		if s, err := c.rt.Session(id); err == nil {
			s.Close()
		}
	}
	c.wg.Wait()
	c.out.flush()
}

func badRequest(msg string) error {
	return &tack.Error{Code: events.CodeBadRequest, Message: msg}
}
