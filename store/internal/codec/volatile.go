package codec

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/internal/storepb"
)

// EncodeVolatile encodes v; the bytes are empty for an empty state.
func EncodeVolatile(v *store.Volatile) ([]byte, error) {
	pb := &storepb.Volatile{
		PromptQueue:   v.PromptQueue,
		SteeringQueue: v.SteeringQueue,
		Rules:         make([]*storepb.Rule, len(v.Rules)),
		RunId:         v.RunID,
		Runs:          v.Counters.Runs,
		Steers:        v.Counters.Steers,
		Holds:         v.Counters.Holds,
		Subagents:     v.Counters.Subagents,
		SubagentUsage: v.SubagentUsage,
		ModelState:    v.ModelState,
		Todos:         v.Todos,
		DetachedTools: v.DetachedTools,
		ContextUsed:   v.ContextUsed,
		TokenScale:    v.TokenScale,
		RunEnd:        v.RunEnd,
		Imported:      v.Unstarted,
	}
	for _, imgs := range v.PromptImages {
		pb.PromptImages = append(pb.PromptImages, &storepb.ImageList{Images: imgs})
	}
	for ref, imgs := range v.SteeringImages {
		if pb.SteeringImages == nil {
			pb.SteeringImages = map[string]*storepb.ImageList{}
		}
		pb.SteeringImages[ref] = &storepb.ImageList{Images: imgs}
	}
	for _, a := range v.Approvals {
		pb.Approvals = append(pb.Approvals, &storepb.Approval{Pending: a.Pending, DeadlineUnixNano: unixNano(a.Deadline),
			Family: a.Family, Hint: a.Hint, AutoResume: a.AutoResume})
	}
	if q := v.Question; q != nil {
		pb.Question = &storepb.Question{Pending: q.Pending, DeadlineUnixNano: unixNano(q.Deadline)}
	}
	for i, r := range v.Rules {
		pb.Rules[i] = &storepb.Rule{Tool: r.Tool, CommandFamily: r.CommandFamily}
	}
	for _, r := range v.Settled {
		pb.Settled = append(pb.Settled, &storepb.Settled{CallId: r.CallID, Content: r.Content, IsError: r.IsError})
	}
	b, err := marshal.Marshal(pb)
	if err != nil {
		return nil, fmt.Errorf("%w: volatile state: %v", store.ErrInvalid, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// DecodeVolatile decodes a stored volatile state; empty bytes are an empty
// state. The result shares nothing with b.
func DecodeVolatile(b []byte) (store.Volatile, error) {
	var pb storepb.Volatile
	if err := proto.Unmarshal(b, &pb); err != nil {
		return store.Volatile{}, fmt.Errorf("store: decoding a stored volatile state: %w", err)
	}
	v := store.Volatile{PromptQueue: pb.PromptQueue, SteeringQueue: pb.SteeringQueue, RunID: pb.RunId,
		Counters:      store.Counters{Runs: pb.Runs, Steers: pb.Steers, Holds: pb.Holds, Subagents: pb.Subagents},
		SubagentUsage: pb.SubagentUsage, ModelState: pb.ModelState,
		Todos: pb.Todos, DetachedTools: pb.DetachedTools, ContextUsed: pb.ContextUsed, TokenScale: pb.TokenScale, RunEnd: pb.RunEnd,
		Unstarted: pb.Imported}
	for _, l := range pb.PromptImages {
		v.PromptImages = append(v.PromptImages, l.Images)
	}
	for ref, l := range pb.SteeringImages {
		if v.SteeringImages == nil {
			v.SteeringImages = map[string][]*eventsv1.Image{}
		}
		v.SteeringImages[ref] = l.Images
	}
	for _, a := range pb.Approvals {
		v.Approvals = append(v.Approvals, store.Approval{Pending: orEmpty(a.Pending), Deadline: fromUnixNano(a.DeadlineUnixNano),
			Family: a.Family, Hint: a.Hint, AutoResume: a.AutoResume})
	}
	if q := pb.Question; q != nil {
		p := q.Pending
		if p == nil {
			p = &eventsv1.PendingQuestion{}
		}
		v.Question = &store.Question{Pending: p, Deadline: fromUnixNano(q.DeadlineUnixNano)}
	}
	for _, r := range pb.Rules {
		v.Rules = append(v.Rules, store.Rule{Tool: r.Tool, CommandFamily: r.CommandFamily})
	}
	for _, r := range pb.Settled {
		v.Settled = append(v.Settled, store.Settled{CallID: r.CallId, Content: r.Content, IsError: r.IsError})
	}
	return v, nil
}

// CloneVolatile deep-copies v through its encoding, so the memory store
// keeps and returns values nobody else can mutate, and fails exactly where
// the SQL stores fail.
func CloneVolatile(v *store.Volatile) (store.Volatile, error) {
	b, err := EncodeVolatile(v)
	if err != nil {
		return store.Volatile{}, err
	}
	return DecodeVolatile(b)
}

func orEmpty(p *eventsv1.PendingApproval) *eventsv1.PendingApproval {
	if p == nil {
		return &eventsv1.PendingApproval{}
	}
	return p
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
