package tack

import (
	"context"
	"io"
	"sync"

	"github.com/tack-run/tack/actors"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Reader reads a session's events from one buffer that all the session's
// readers share: the session hands each event to that buffer once,
// however many read it, where each Subscription costs the session a
// channel send per event. It is for many readers of one session (a
// browser tab each, a fan-out to several consumers); its events are the
// Subscription's, with the same order, filter and events_lost rules. One
// goroutine reads a Reader at a time.
type Reader struct {
	r *events.FeedReader
	s *Session
	// post tells the session the reader is gone (local.post).
	post func(*Session, any)
	// sub carries the events of a session that lives elsewhere.
	sub  *Subscription
	once sync.Once
}

// Read starts a Reader of the session's events: the replay after
// opt.Since (or, with opt.Buffered, everything still buffered), then the
// live events, those whose type matches opt.Types, with no gap and no
// duplicate. The shared buffer holds at least opt.Buffer events (default
// 1024): a reader that falls further behind gets events_lost and reads on
// from the oldest event held. A reader keeps its session loaded, as a
// Subscription does.
func (s *Session) Read(ctx context.Context, opt SubscribeOptions) (*Reader, error) {
	f, err := opt.prepare()
	if err != nil {
		return nil, err
	}
	return s.rt.reach.read(ctx, s, f, opt)
}

// read joins a reader to the session's feed.
func (l *local) read(ctx context.Context, s *Session, f events.Filter, opt SubscribeOptions) (*Reader, error) {
	r := events.NewFeedReader(f, opt.Buffer)
	if _, err := s.Send(ctx, &actors.ReadFeed{Reader: r, Since: opt.Since, Buffered: opt.Buffered, Buffer: opt.Buffer}); err != nil {
		l.post(s, &actors.LeaveFeed{Reader: r}) // as subscribe does
		return nil, err
	}
	return &Reader{r: r, s: s, post: l.post}, nil
}

// post tells the session that a reader or a subscriber is gone, without
// waiting for an answer: the reader is closed already (Next returns
// io.EOF), and the session only drops it from its feed. A session that
// is not loaded has no feed to drop it from, and one that is stopping
// never answers: protoactor drops the messages queued behind a stop.
// Waiting held a closing event stream for the runtime's request timeout,
// and a server's graceful shutdown with it. In a runtime that passivates
// it goes by id (Registry.Post): a subscription given up while its
// session woke was queued for the woken session, and the news that its
// subscriber was gone must follow it there, or the session would stay
// loaded, fed, for nobody.
func (l *local) post(s *Session, msg any) {
	if s.pid == nil {
		l.rt.registry.Post(s.id, msg)
		return
	}
	l.rt.system.Root.Send(s.pid, msg)
}

// Next returns the next event, waiting for one until ctx ends. It returns
// io.EOF once the reader is closed or its session ended it (the session
// stopped, was passivated or deleted); ctx's error when ctx ends first.
func (r *Reader) Next(ctx context.Context) (*eventsv1.Event, error) {
	if r.sub == nil {
		return r.r.Next(ctx)
	}
	select {
	case ev, ok := <-r.sub.C:
		if !ok {
			return nil, io.EOF
		}
		return ev, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TryNext is Next without the wait: nil and no error when no event is
// there yet. A loop that waits on other things too (a timer, a shutdown)
// writes what TryNext gives, then waits in Next with a context that
// those things end.
func (r *Reader) TryNext() (*eventsv1.Event, error) {
	if r.sub == nil {
		return r.r.TryNext()
	}
	select {
	case ev, ok := <-r.sub.C:
		if !ok {
			return nil, io.EOF
		}
		return ev, nil
	default:
		return nil, nil
	}
}

// Close ends the reader: Next returns io.EOF from then on, at once if it
// is waiting. Closing twice does nothing.
func (r *Reader) Close() error {
	var err error
	r.once.Do(func() {
		if r.sub != nil {
			err = r.sub.Close()
			return
		}
		r.r.Close()
		if !r.r.Ended() { // else the session ended the feed: nothing to tell
			r.post(r.s, &actors.LeaveFeed{Reader: r.r})
		}
	})
	return err
}
