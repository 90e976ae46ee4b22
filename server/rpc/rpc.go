package rpc

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/server/command"
)

// DefaultMaxLineBytes bounds one command line unless WithMaxLineBytes
// says otherwise: 1 MiB.
const DefaultMaxLineBytes = 1 << 20

// eventBuffer is each session subscription's capacity.
const eventBuffer = 8192

// Option configures Serve.
type Option func(*options)

type options struct {
	maxLine int
}

// WithMaxLineBytes bounds one command line to n bytes, not counting its
// line ending (default DefaultMaxLineBytes); n <= 0 keeps the default. A
// longer line gets a bad_request response and is skipped without being
// held in memory.
func WithMaxLineBytes(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxLine = n
		}
	}
}

// Serve runs the protocol until in ends or ctx is done. It closes the
// sessions it created before returning. Every line but an empty one gets
// exactly one response.
func Serve(ctx context.Context, rt *tack.Runtime, in io.Reader, out io.Writer, opts ...Option) error {
	o := options{maxLine: DefaultMaxLineBytes}
	for _, opt := range opts {
		opt(&o)
	}
	c := &conn{rt: rt, out: &writer{w: bufio.NewWriter(out)}, subs: map[string]*tack.Subscription{}}
	defer c.close()
	p := command.NewPipeline(inFlight)
	defer p.Wait()
	lr := newLineReader(in, o.maxLine)
	for {
		line, tooLong, err := lr.next()
		if err != nil && err != io.EOF {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if tooLong {
			p.Go(ctx, func(context.Context) func() {
				return c.answer(command.Header{}, nil, badRequest(fmt.Sprintf("line is longer than %d bytes; it was skipped", o.maxLine)))
			})
		} else if len(line) > 0 {
			line := bytes.Clone(line) // the reader reuses its buffer
			p.Go(ctx, func(ctx context.Context) func() { return c.handle(ctx, line) })
		}
		if err == io.EOF {
			return nil
		}
	}
}

// inFlight is how many commands of a connection run at once (a Pipeline
// runs each once the one before it has reached its session): past it,
// reading waits.
const inFlight = 64

// conn is one client's connection.
type conn struct {
	rt   *tack.Runtime
	out  *writer
	mu   sync.Mutex
	subs map[string]*tack.Subscription
	wg   sync.WaitGroup
}

// handle runs one command line and returns what writes its response.
func (c *conn) handle(ctx context.Context, line []byte) (answer func()) {
	h, obj, err := command.Parse(line)
	if err != nil {
		return c.answer(h, nil, err)
	}
	env := command.Env{Runtime: c.rt, Use: c.follow, Closed: c.forget}
	data, err := command.RunObject(ctx, env, h.Cmd, h.Session, obj)
	return c.answer(h, data, err)
}

// answer returns what writes the response h, data and err make.
func (c *conn) answer(h command.Header, data proto.Message, err error) func() {
	return func() { c.out.response(h, data, err) }
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
