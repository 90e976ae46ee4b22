package a2aserver

import (
	"context"
	"fmt"
	"iter"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// ownedSubscriptions is a2a-go's request handler with SubscribeToTask
// behind the owner check GetTask has. a2a-go attaches a subscriber to a
// running execution by the task's id alone: it reads the stored task,
// which the per-user store refuses to anyone but its owner, only for a
// first snapshot, and streams on without it. So another user who knew a
// task's id read its answer, its approval requests and its context id
// (the session's) as they came. A caller who may not get the task is told
// that it does not exist, as for a task that does not.
type ownedSubscriptions struct{ a2asrv.RequestHandler }

func (h ownedSubscriptions) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	if req != nil {
		none := 0
		if _, err := h.GetTask(ctx, &a2a.GetTaskRequest{Tenant: req.Tenant, ID: req.ID, HistoryLength: &none}); err != nil {
			return func(yield func(a2a.Event, error) bool) {
				yield(nil, fmt.Errorf("%w: %s", a2a.ErrTaskNotFound, req.ID))
			}
		}
	}
	return h.RequestHandler.SubscribeToTask(ctx, req)
}
