package tack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/store"
)

// DefaultLeaseTTL is how long a node owns a stored session without
// renewing its lease; the runtime renews every third of it.
const DefaultLeaseTTL = 30 * time.Second

// persistence is what a runtime with a store keeps.
type persistence struct {
	store   store.Store
	node    string
	ttl     time.Duration
	restore sync.Mutex // one restore at a time, so a session loads once
	stop    chan struct{}
	done    sync.WaitGroup
}

// defaultNode names this process as a session owner.
func defaultNode() string {
	host, _ := os.Hostname()
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + strconv.FormatInt(time.Now().UnixNano(), 36)
}

// startRenewing renews the leases of the loaded sessions until Close; a
// session whose lease another node took is closed here.
func (rt *Runtime) startRenewing() {
	p := rt.persist
	p.stop = make(chan struct{})
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		tick := time.NewTicker(p.ttl / 3)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				for _, id := range rt.registry.IDs() {
					if err := p.store.Renew(context.Background(), id, p.node, p.ttl); errors.Is(err, store.ErrOwned) {
						rt.registry.Close(id)
					}
				}
			}
		}
	}()
}

// createStored records a new session before it starts; it fails when the
// id is taken in the store.
func (rt *Runtime) createStored(id string, cfg SessionConfig, modelName string) error {
	p := rt.persist
	sc := store.Config{Model: modelName, System: cfg.System, Tools: cfg.Tools, Script: cfg.Script, User: cfg.User}
	if len(cfg.Plugins) > 0 {
		sc.Plugins, _ = json.Marshal(pluginsJSON(cfg.Plugins))
	}
	ctx := context.Background()
	if err := p.store.Create(ctx, id, sc); err != nil {
		if errors.Is(err, store.ErrExists) {
			return &Error{Code: events.CodeBadRequest, Message: fmt.Sprintf("session %q exists", id)}
		}
		return &Error{Code: events.CodeInternal, Message: err.Error()}
	}
	return rt.acquire(ctx, id)
}

// acquire takes the session's lease for this node.
func (rt *Runtime) acquire(ctx context.Context, id string) error {
	p := rt.persist
	err := p.store.Acquire(ctx, id, p.node, p.ttl)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrOwned):
		return &Error{Code: events.CodeNotAlive, Message: err.Error()}
	case errors.Is(err, store.ErrNotFound):
		return &Error{Code: events.CodeInvalidSession, Message: fmt.Sprintf("no session %q", id)}
	}
	return &Error{Code: events.CodeInternal, Message: err.Error()}
}

// restore loads a stored session into this process: its lease first, then
// its record and history, then a session actor that takes it up.
func (rt *Runtime) restore(id string) (*Session, error) {
	p := rt.persist
	p.restore.Lock()
	defer p.restore.Unlock()
	if pid, ok := rt.registry.Lookup(id); ok {
		return &Session{id: id, pid: pid, rt: rt}, nil
	}
	ctx := context.Background()
	if err := rt.acquire(ctx, id); err != nil {
		return nil, err
	}
	snap, err := p.store.Load(ctx, id)
	if err != nil {
		_ = p.store.Release(ctx, id, p.node)
		return nil, &Error{Code: events.CodeInternal, Message: err.Error()}
	}
	spec, err := rt.spec(id, SessionConfig{ID: id, Model: snap.Config.Model, Script: snap.Config.Script,
		System: snap.Config.System, Tools: snap.Config.Tools, Plugins: configsFrom(snap.Config.Plugins), User: snap.Config.User})
	if err != nil {
		_ = p.store.Release(ctx, id, p.node)
		return nil, err
	}
	spec.Restore = snap
	pid, err := rt.registry.Spawn(spec)
	if err != nil {
		return nil, err
	}
	rt.users.Store(id, snap.Config.User)
	return &Session{id: id, pid: pid, rt: rt}, nil
}

// release gives up a closed session's lease.
func (rt *Runtime) release(id string) {
	if rt.persist != nil {
		_ = rt.persist.store.Release(context.Background(), id, rt.persist.node)
	}
}

// storedState answers get_state for a session that is not loaded.
func (rt *Runtime) storedState(ctx context.Context, id string) (*eventsv1.SessionState, error) {
	snap, err := rt.persist.store.Get(ctx, id)
	if err != nil {
		return nil, storeError(id, err)
	}
	v := snap.Volatile
	st := &eventsv1.SessionState{
		State: snap.State, Model: snap.Config.Model, PromptQueue: append([]string{}, v.PromptQueue...),
		SteeringQueue: append([]*eventsv1.SteeringItem{}, v.SteeringQueue...), PendingApprovals: []*eventsv1.PendingApproval{},
		MessageCount: int32(snap.MessageCount), Usage: snap.Usage, Context: &eventsv1.ContextInfo{},
	}
	if v.RunID != "" {
		st.RunId = &v.RunID
	}
	for _, a := range v.Approvals {
		st.PendingApprovals = append(st.PendingApprovals, a.Pending)
	}
	if v.Question != nil {
		st.PendingQuestion = v.Question.Pending
	}
	return st, nil
}

// storeError maps a store error of a read to a protocol error.
func storeError(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
		return &Error{Code: events.CodeInvalidSession, Message: fmt.Sprintf("no session %q", id)}
	}
	return &Error{Code: events.CodeInternal, Message: err.Error()}
}

// pluginConfig is the stored form of a plugin's configuration.
type pluginConfig struct {
	Name   string          `json:"name"`
	Config json.RawMessage `json:"config,omitempty"`
}

func pluginsJSON(cs []plugins.Config) []pluginConfig {
	out := make([]pluginConfig, len(cs))
	for i, c := range cs {
		out[i] = pluginConfig{Name: c.Name, Config: c.Config}
	}
	return out
}

func configsFrom(raw json.RawMessage) []plugins.Config {
	var pcs []pluginConfig
	_ = json.Unmarshal(raw, &pcs) // the runtime wrote it
	out := make([]plugins.Config, len(pcs))
	for i, c := range pcs {
		out[i] = plugins.Config{Name: c.Name, Config: c.Config}
	}
	return out
}

// State answers get_state for session id: from the session when it is
// loaded, from the store (without loading it) when it is only stored.
func (rt *Runtime) State(ctx context.Context, id string) (*eventsv1.SessionState, error) {
	if pid, ok := rt.registry.Lookup(id); ok {
		return (&Session{id: id, pid: pid, rt: rt}).State(ctx)
	}
	if rt.persist == nil {
		return nil, storeError(id, store.ErrNotFound)
	}
	return rt.storedState(ctx, id)
}

// Messages answers get_messages for session id, like State.
func (rt *Runtime) Messages(ctx context.Context, id string) ([]*eventsv1.Message, error) {
	if pid, ok := rt.registry.Lookup(id); ok {
		return (&Session{id: id, pid: pid, rt: rt}).Messages(ctx)
	}
	if rt.persist == nil {
		return nil, storeError(id, store.ErrNotFound)
	}
	msgs, err := rt.persist.store.Messages(ctx, id, 0, 0)
	if err != nil {
		return nil, storeError(id, err)
	}
	if msgs == nil {
		msgs = []*eventsv1.Message{}
	}
	return msgs, nil
}

// ListOptions select the sessions List returns.
type ListOptions struct {
	// Limit is the page size (default 100, at most 1000); with a store only.
	Limit int
	// Cursor is the previous page's next; empty for the first page.
	Cursor string
	// User, when not empty, lists only that user's sessions.
	User string
}

// List returns a page of sessions: with a store, every stored session (of
// opt.User when set), most recently updated first, opt.Limit at a time;
// without one, the loaded sessions. Loaded sessions report their live
// state.
func (rt *Runtime) List(ctx context.Context, opt ListOptions) (*eventsv1.SessionList, error) {
	list := &eventsv1.SessionList{Sessions: []*eventsv1.SessionSummary{}}
	if rt.persist == nil {
		for _, id := range rt.Sessions() {
			if u, _ := rt.users.Load(id); opt.User != "" && u != opt.User {
				continue
			}
			if sum := rt.liveSummary(ctx, id); sum != nil {
				list.Sessions = append(list.Sessions, sum)
			}
		}
		return list, nil
	}
	page, err := rt.persist.store.List(ctx, store.Page{Limit: opt.Limit, Cursor: opt.Cursor, User: opt.User})
	if err != nil {
		return nil, &Error{Code: events.CodeBadRequest, Message: err.Error()}
	}
	for _, s := range page.Sessions {
		sum := rt.liveSummary(ctx, s.ID)
		if sum == nil {
			sum = &eventsv1.SessionSummary{Session: s.ID, State: s.State, Model: s.Config.Model, MessageCount: int32(s.MessageCount)}
		}
		list.Sessions = append(list.Sessions, sum)
	}
	list.Next = page.Next
	return list, nil
}

// liveSummary describes a loaded session, or returns nil.
func (rt *Runtime) liveSummary(ctx context.Context, id string) *eventsv1.SessionSummary {
	pid, ok := rt.registry.Lookup(id)
	if !ok {
		return nil
	}
	st, err := (&Session{id: id, pid: pid, rt: rt}).State(ctx)
	if err != nil {
		return nil
	}
	return &eventsv1.SessionSummary{Session: id, State: st.State, Model: st.Model, MessageCount: st.MessageCount, Loaded: true}
}

// User returns the user session id belongs to ("" for nobody in
// particular), or invalid_session when there is no such session. With a
// store it reads the session's record, loaded or not, and never restores
// it: finding out costs the same for every session, so a caller that
// hides other users' sessions gives nothing away by timing.
func (rt *Runtime) User(ctx context.Context, id string) (string, error) {
	if rt.persist == nil {
		if u, ok := rt.users.Load(id); ok {
			return u.(string), nil
		}
		return "", storeError(id, store.ErrNotFound)
	}
	snap, err := rt.persist.store.Get(ctx, id)
	if err != nil {
		return "", storeError(id, err)
	}
	return snap.Config.User, nil
}
