package actors

import (
	"encoding/json"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tack-run/tack/internal/delayline"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/tools"
)

// Defaults of Settings.
const (
	DefaultRingSize      = 1024
	DefaultSteeringLimit = 3
	DefaultPromptLimit   = 100
	DefaultToolGrace     = time.Second
	DefaultIdleTrim      = time.Minute
	DefaultIdleKeep      = 64
	// DefaultApprovalTimeout is how long an approval waits by default: 120 s.
	DefaultApprovalTimeout = 120 * time.Second
	// DefaultLeaseTTL is how long a node owns a stored session without
	// renewing its lease; the Registry renews every third of it.
	DefaultLeaseTTL = 30 * time.Second
)

// DefaultSettings returns the defaults of Settings, as zero fields take
// them: no store, no passivation.
func DefaultSettings() Settings {
	return Settings{MaxImageBytes: llm.DefaultMaxImageBytes, RingSize: DefaultRingSize, SteeringLimit: DefaultSteeringLimit,
		PromptLimit: DefaultPromptLimit, ToolGrace: DefaultToolGrace, IdleTrim: DefaultIdleTrim, IdleKeep: DefaultIdleKeep,
		ApprovalTimeout: DefaultApprovalTimeout, PluginBudget: plugins.DefaultBudget, LeaseTTL: DefaultLeaseTTL}
}

// Settings are the values a runtime gives every one of its sessions:
// limits, timeouts, the clock, and where and as whom sessions are stored.
// Zero fields take their defaults.
type Settings struct {
	// MaxImageBytes bounds the decoded bytes of each data-URL image a
	// prompt or steering message carries (<= 0: llm.DefaultMaxImageBytes).
	MaxImageBytes int64
	// Clock stamps events and tool metrics.
	Clock func() time.Time
	// RingSize is the number of events each session buffers for replay.
	RingSize int
	// SteeringLimit bounds each session's steering queue.
	SteeringLimit int
	// PromptLimit bounds each session's prompt queue.
	PromptLimit int
	// ToolGrace is how long a cancelled tool may take to return before it
	// is counted as abandoned.
	ToolGrace time.Duration
	// IdleTrim is how long a session stays idle before its event buffer
	// shrinks to the newest IdleKeep events (default 1 min, 64).
	IdleTrim time.Duration
	IdleKeep int
	// ApprovalTimeout is how long a held call waits for approval when the
	// plugin sets no timeout.
	ApprovalTimeout time.Duration
	// PluginBudget is how long one plugin may take to answer one hook.
	PluginBudget time.Duration
	// Store keeps sessions; nil keeps them in memory only.
	Store store.Store
	// Node names this process as the owner of the sessions it stores.
	Node string
	// LeaseTTL is how long this node owns a stored session without
	// renewing its lease (default DefaultLeaseTTL).
	LeaseTTL time.Duration
	// PassivateAfter, with a Store or a Park, stops a session that has
	// been quiet that long; its next command restores it (passivate.go).
	// 0 keeps sessions loaded until they are closed.
	PassivateAfter time.Duration
	// LeaseWait, with a Store, is how long the restore of a session
	// another node holds waits for that lease to be given up or to
	// expire before it fails with store.ErrOwned; 0 fails at once. A
	// cluster member sets it: the member a session moves to waits out
	// the lease of the member it moves from.
	LeaseWait time.Duration
}

// Env is what every session of a runtime shares: its Settings and the
// parts of the runtime sessions call on. An Env must not be changed once
// sessions use it.
type Env struct {
	Settings
	Logger *zap.Logger
	// Models resolves the models plugins switch to; nil refuses switches.
	Models llm.Resolver
	// Tools holds the tools attach_tools may add besides a session's
	// plugins' own; nil holds none.
	Tools *tools.Catalog
	// Workspace is where the sessions' tools work, which plugins are told
	// (plugins.Event); nil for none.
	Workspace tools.Workspace
	// Metrics is told what sessions do (package metrics counts it for
	// Prometheus); nil tells no one.
	Metrics Observer
	// Tracer traces what sessions do; nil traces nothing.
	Tracer Tracer
	// Runs bounds each user's runs in progress (runlimit.go); nil bounds
	// nothing.
	Runs RunLimiter
	// Park, in a runtime without a Store that passivates, keeps the
	// quiet sessions it stops: each is written there whole as it stops
	// and taken out as it is restored (park.go). Nil with a Store.
	Park Lot

	specs sync.Map // *tools.Set → []llm.ToolSpec
	lines lines
}

// Lot is where a runtime without a store parks its quiet sessions
// (store/memory's Store): a store that also takes a session whole, gives
// one up alone (Remove), not with its sub-agents as Delete does, and
// forgets a session's sub-agents whether or not it holds the session
// (RemoveWithin: a closed parent's, which it no longer holds).
type Lot interface {
	store.Store
	Put(id string, cfg store.Config, snap *store.Snapshot) error
	Remove(id string) bool
	RemoveWithin(parent string)
}

// Unloaded is where the sessions that are not loaded are kept: the Store,
// or the Park without one; nil when neither is set (then a session that
// is not loaded does not exist).
func (e *Env) Unloaded() store.Store {
	if e.Store != nil {
		return e.Store
	}
	if e.Park != nil {
		return e.Park
	}
	return nil
}

// Passivates reports whether the runtime's quiet sessions passivate (or
// park): PassivateAfter is set, and there is a Store or a Park.
func (e *Env) Passivates() bool { return e.PassivateAfter > 0 && e.Unloaded() != nil }

// StaysLoaded reports whether a session on model m, which Models gave for
// the name asked (with the inline script inline), must stay loaded in
// this runtime (Spec.StaysLoaded): its quiet sessions passivate, and one
// taken up again would be resolved from m's name, which Models does not
// know (llm.ResolvesAgain).
func (e *Env) StaysLoaded(m *llm.Model, asked string, inline json.RawMessage) bool {
	return e.Passivates() && e.Models != nil && !llm.ResolvesAgain(e.Models, m, asked, inline)
}

// lines are the delay lines of the sessions' passivation and idle-trim
// timers, made on first use: two timers for the whole runtime, not two
// per session (package delayline says why).
type lines struct {
	once            sync.Once
	passivate, trim *delayline.Line
}

// passivateLine is the delay line of the passivation timers (nil when
// sessions do not passivate).
func (e *Env) passivateLine() *delayline.Line { return e.makeLines().passivate }

// trimLine is the delay line of the idle-trim timers.
func (e *Env) trimLine() *delayline.Line { return e.makeLines().trim }

func (e *Env) makeLines() *lines {
	e.lines.once.Do(func() {
		e.lines.trim = delayline.New(e.idleTrim())
		if e.PassivateAfter > 0 {
			e.lines.passivate = delayline.New(e.PassivateAfter)
		}
	})
	return &e.lines
}

func (e *Env) logger() *zap.Logger {
	if e.Logger == nil {
		return zap.NewNop()
	}
	return e.Logger
}

// observer is Metrics, or an Observer that does nothing.
func (e *Env) observer() Observer {
	if e.Metrics == nil {
		return nopObserver{}
	}
	return e.Metrics
}

func (e *Env) now() time.Time {
	if e.Clock == nil {
		return time.Now()
	}
	return e.Clock()
}

func (e *Env) ringSize() int      { return orDefault(e.RingSize, DefaultRingSize) }
func (e *Env) steeringLimit() int { return orDefault(e.SteeringLimit, DefaultSteeringLimit) }
func (e *Env) promptLimit() int   { return orDefault(e.PromptLimit, DefaultPromptLimit) }

func (e *Env) idleKeep() int { return orDefault(e.IdleKeep, DefaultIdleKeep) }

func (e *Env) idleTrim() time.Duration {
	if e.IdleTrim <= 0 {
		return DefaultIdleTrim
	}
	return e.IdleTrim
}

func (e *Env) approvalTimeout() time.Duration {
	if e.ApprovalTimeout <= 0 {
		return DefaultApprovalTimeout
	}
	return e.ApprovalTimeout
}

func (e *Env) grace() time.Duration {
	if e.ToolGrace <= 0 {
		return DefaultToolGrace
	}
	return e.ToolGrace
}

// toolSpecs describes a tool set to models, once per set: sessions with the
// same tools share the set and its description.
func (e *Env) toolSpecs(set *tools.Set) []llm.ToolSpec {
	if v, ok := e.specs.Load(set); ok {
		return v.([]llm.ToolSpec)
	}
	var out []llm.ToolSpec
	for _, sp := range set.Specs() {
		out = append(out, llm.ToolSpec{Name: sp.Name, Description: sp.Description, Parameters: sp.Schema})
	}
	v, _ := e.specs.LoadOrStore(set, out)
	return v.([]llm.ToolSpec)
}

func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}
