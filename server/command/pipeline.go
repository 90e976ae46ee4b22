package command

import (
	"context"
	"sync"

	"github.com/tack-run/tack"
)

// A Pipeline runs the commands of one connection in the order they came,
// each once the command before it has reached its session's mailbox, or
// has ended, and answers them in that order. A session takes its commands
// in the order they reach it, so the next need not wait for this one's
// answer to be sent: an answer can wait for the store's write (a prompt
// taken while the agent works), and an abort sent after it, run one
// command at a time, waited as long to reach its session. Its answer
// still comes after the prompt's; its events (agent_abort) come at once.
// A command that is not one message to a session (create_session, fork,
// close_session, export_session, list_sessions, switch_model, ...) is run
// whole before the next one starts, so one that makes or ends a session
// is done before a command that uses it.
//
// Go is called from one goroutine, the connection's reader; the commands
// run on goroutines of their own.
type Pipeline struct {
	// sent and answered are closed once the command last given to Go may
	// be followed, and once it is answered.
	sent, answered chan struct{}
	slots          chan struct{} // one per command in flight
	wg             sync.WaitGroup
}

// NewPipeline returns a Pipeline that holds at most inFlight commands
// (at least one) at a time: Go waits for room past that.
func NewPipeline(inFlight int) *Pipeline {
	return &Pipeline{slots: make(chan struct{}, max(inFlight, 1))}
}

// Go runs a command on a goroutine of its own: run, once the command
// before it has reached its session or ended, then the answer run
// returns, once the command before it is answered. run's context tells
// the send of the command (send, through tack.OnDelivered) when it has
// reached its session.
func (p *Pipeline) Go(ctx context.Context, run func(ctx context.Context) (answer func())) {
	p.slots <- struct{}{}
	sentBefore, answeredBefore := p.sent, p.answered
	sent, answered := make(chan struct{}), make(chan struct{})
	p.sent, p.answered = sent, answered
	var once sync.Once
	follow := func() { once.Do(func() { close(sent) }) }
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer func() { <-p.slots }()
		defer close(answered)
		defer follow()
		wait(sentBefore)
		answer := run(context.WithValue(ctx, followKey{}, follow))
		follow()
		wait(answeredBefore)
		answer()
	}()
}

// wait waits until c is closed; a nil c is.
func wait(c chan struct{}) {
	if c != nil {
		<-c
	}
}

// Wait waits until every command given to Go is answered.
func (p *Pipeline) Wait() { p.wg.Wait() }

// followKey is the context key of the function that lets a Pipeline's
// next command go.
type followKey struct{}

// delivering is ctx telling, through tack.OnDelivered, the Pipeline that
// runs the command (if any) once its one message is in its session's
// mailbox.
func delivering(ctx context.Context) context.Context {
	if f, ok := ctx.Value(followKey{}).(func()); ok {
		return tack.OnDelivered(ctx, f)
	}
	return ctx
}
