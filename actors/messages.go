package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/tools"
)

// A report is what a session's own goroutines and timers post to it: a
// model stream's chunks and end, a tool's progress and result, a child's
// events, a store write that landed, a timer that fell due. Reports wait
// in a lane of their own in the mailbox, behind every command (mailbox),
// so that an abort is never queued behind them.
type report interface{ report() }

func (*streamChunk) report()     {}
func (*streamDone) report()      {}
func (*toolUpdate) report()      {}
func (*toolDone) report()        {}
func (*childEvent) report()      {}
func (*subagentStarted) report() {}
func (*compactDone) report()     {}
func (*modelResolved) report()   {}
func (*holdExpired) report()     {}
func (*abortDue) report()        {}
func (*stored) report()          {}
func (*rewrite) report()         {}
func (*idleTrim) report()        {}
func (*PassivateDue) report()    {}
func (*PassivateNow) report()    {}

// tag names the run and turn a goroutine works for. Messages whose tag is
// not the session's current one come from a cancelled run or turn and are
// dropped.
type tag struct {
	run  uint64
	turn int32
}

// streamChunk is one chunk from the stream pump.
type streamChunk struct {
	tag   tag
	chunk llm.Chunk
	// window is the request's count of chunks in the mailbox, which the
	// mailbox releases as it takes the chunk; nil counts nothing.
	window *window
}

// streamDone ends a model request: resp on success, err on failure.
type streamDone struct {
	tag  tag
	resp *llm.Response
	err  error
}

// toolUpdate says a running tool call has partial output to relay: what
// its progress holds when the session takes it.
type toolUpdate struct {
	tag      tag
	index    int
	progress *progress
}

// toolDone is the result of a tool call.
type toolDone struct {
	tag    tag
	index  int
	result tools.Result
	ended  time.Time
}

// SwitchModel asks a session to use an already resolved model for its next
// request. Resolution (which may read a script file) happens on the caller's
// goroutine, so the actor never does I/O.
type SwitchModel struct {
	Model *llm.Model
	// StaysLoaded: Model would not be had again from its name
	// (Spec.StaysLoaded).
	StaysLoaded bool
}

// SubscribeSink attaches an in-process sink: the buffered events after Since
// that match Filter, then live ones. The reply is a Reply without data.
type SubscribeSink struct {
	Sink   events.Sink
	Since  uint64
	Filter events.Filter
	// Buffered starts with the oldest event still buffered, however far
	// back that is, instead of at Since (no events_lost for what is gone).
	Buffered bool
}

// ReadFeed joins Reader to the session's feed, the one buffer its readers
// share (made with its first reader; its ring holds at least Buffer
// events): the buffered events after Since that match the reader's
// filter, then live ones. The reply is a Reply without data.
type ReadFeed struct {
	Reader *events.FeedReader
	Since  uint64
	// Buffered is SubscribeSink's.
	Buffered bool
	Buffer   int
}

// LeaveFeed detaches Reader from the session's feed; the feed ends with
// its last reader. The reply, to a request, is a Reply without data.
type LeaveFeed struct{ Reader *events.FeedReader }

// SubscribePID attaches an actor as a subscriber; the session watches it and
// drops it when it dies.
type SubscribePID struct {
	PID    *actor.PID
	Since  uint64
	Filter events.Filter
}

// UnsubscribePID detaches an actor attached with SubscribePID and stops
// watching it; the reply is a Reply without data.
type UnsubscribePID struct {
	PID *actor.PID
}

// GetSummary asks a session for its list_sessions entry: the reply's
// sessions hold that one entry, loaded, with updated_at the time of the
// session's last change by the runtime's clock.
type GetSummary struct{}

// Unsubscribe detaches a sink attached with SubscribeSink; a sink that is an
// *events.Channel is closed.
type Unsubscribe struct {
	Sink events.Sink
}

// idleTrim says a session may have been idle long enough to shrink its
// event buffer; runs is the run count when it went idle.
type idleTrim struct{ runs uint64 }

// holdExpired says an approval's wait is over.
type holdExpired struct {
	tag tag
	id  string
}

// modelResolved carries a model a plugin's switch_model asked for,
// resolved off the actor.
type modelResolved struct {
	name  string
	model *llm.Model
	stays bool // SwitchModel.StaysLoaded
	err   error
}
