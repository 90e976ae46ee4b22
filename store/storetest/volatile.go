package storetest

import (
	"testing"
	"time"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
)

func fullVolatile(deadline time.Time) *store.Volatile {
	return &store.Volatile{
		PromptQueue:   []string{"first", "second", ""},
		SteeringQueue: []*eventsv1.SteeringItem{{Ref: "st-1", Text: "go left"}, {Ref: "st-2", Text: "no, right"}},
		Approvals: []store.Approval{
			{Pending: &eventsv1.PendingApproval{ApprovalId: "ap-1", Tool: "shell", CallId: "call-1",
				Args: &eventsv1.RawJSON{Json: []byte(`{"cmd":  "rm -rf /tmp/x", "n": 1.50}`)}}, Deadline: deadline,
				Family: "rm", Hint: "shell: rm -rf /tmp/x", AutoResume: true},
			{Pending: &eventsv1.PendingApproval{ApprovalId: "ap-2", Tool: "write_file", CallId: "call-2"}},
		},
		Question: &store.Question{
			Pending:  &eventsv1.PendingQuestion{Ref: "q-1", Question: "Which branch?", Options: []string{"main", "dev"}},
			Deadline: deadline.Add(time.Minute),
		},
		Rules:         []store.Rule{{Tool: "read_file"}, {Tool: "shell", CommandFamily: "git"}},
		RunID:         "r-7",
		Counters:      store.Counters{Runs: 7, Steers: 3, Holds: 2, Subagents: 4},
		ModelState:    []byte(`{"next":2}`),
		SubagentUsage: &eventsv1.Usage{InputTokens: 30, OutputTokens: 12, TotalTokens: 42, CostUsd: 0.25},
		Todos:         []*eventsv1.Todo{{Text: "read the code", Status: "done"}, {Text: "", Status: "pending"}},
		DetachedTools: []string{"sleep", "ask_user"},
		ContextUsed:   4321,
		RunEnd:        "rejected",
		TokenScale:    1.25,
		Settled:       []store.Settled{{CallID: "call-3", Content: "slept 50 ms"}, {CallID: "call-4", Content: "no such file", IsError: true}},
	}
}

func testVolatileReplace(t *testing.T, e *env) {
	e.create(t, "s1")
	deadline := time.Date(2025, 6, 7, 8, 9, 10, 123456789, time.UTC) // nanoseconds survive
	steps := []struct {
		name string
		set  *store.Volatile
		want *store.Volatile
	}{
		{"initially empty", nil, &store.Volatile{}},
		{"full", fullVolatile(deadline), fullVolatile(deadline)},
		{"nil leaves it", nil, fullVolatile(deadline)},
		{"replaced as a whole", &store.Volatile{PromptQueue: []string{"only"}}, &store.Volatile{PromptQueue: []string{"only"}}},
		{"question without deadline", &store.Volatile{Question: &store.Question{Pending: &eventsv1.PendingQuestion{Ref: "q"}}},
			&store.Volatile{Question: &store.Question{Pending: &eventsv1.PendingQuestion{Ref: "q"}}}},
		{"todos only", &store.Volatile{Todos: []*eventsv1.Todo{{Text: "ship", Status: "in_progress"}}},
			&store.Volatile{Todos: []*eventsv1.Todo{{Text: "ship", Status: "in_progress"}}}},
		{"cleared", &store.Volatile{}, &store.Volatile{}},
	}
	for _, st := range steps {
		e.apply(t, "s1", &store.Batch{Volatile: st.set})
		got, err := e.st.Get(e.ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		wantVolatile(t, st.name, &got.Volatile, st.want)
	}

	// The store keeps its own copy: changing what was passed in or what
	// was returned changes nothing stored.
	v := fullVolatile(deadline)
	e.apply(t, "s1", &store.Batch{Volatile: v})
	v.PromptQueue[0] = "mutated"
	v.Approvals[0].Pending.Tool = "mutated"
	got, _ := e.st.Get(e.ctx, "s1")
	got.Volatile.SteeringQueue[0].Text = "mutated"
	again, _ := e.st.Get(e.ctx, "s1")
	wantVolatile(t, "after mutating copies", &again.Volatile, fullVolatile(deadline))
}
