package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
)

// msgs returns n distinct messages numbered from first: a user prompt, an
// assistant tool call, a tool result, in turn.
func msgs(first, n int) []*eventsv1.Message {
	out := make([]*eventsv1.Message, n)
	for i := range out {
		k := first + i
		switch k % 3 {
		case 0:
			out[i] = &eventsv1.Message{Role: "user", Content: fmt.Sprintf("prompt %d", k)}
		case 1:
			out[i] = &eventsv1.Message{Role: "assistant", Thinking: "hmm", ToolCalls: []*eventsv1.ToolCall{{
				Id: fmt.Sprintf("call-%d", k), Name: "shell",
				Args: &eventsv1.RawJSON{Json: []byte(fmt.Sprintf(`{"cmd": "echo %d", "n": 1.50}`, k))},
			}}}
		default:
			out[i] = &eventsv1.Message{Role: "tool", ToolCallId: fmt.Sprintf("call-%d", k-1), Content: "ok", IsError: k%2 == 0}
		}
	}
	return out
}

// create makes session id or fails the test.
func (e *env) create(t *testing.T, id string) {
	t.Helper()
	if err := e.st.Create(e.ctx, id, store.Config{Model: "script:demo"}); err != nil {
		t.Fatalf("Create(%s): %v", id, err)
	}
}

// apply applies b to id or fails the test.
func (e *env) apply(t *testing.T, id string, b *store.Batch) {
	t.Helper()
	if err := e.st.Apply(e.ctx, id, b); err != nil {
		t.Fatalf("Apply(%s): %v", id, err)
	}
}

// load loads id or fails the test.
func (e *env) load(t *testing.T, id string) *store.Snapshot {
	t.Helper()
	snap, err := e.st.Load(e.ctx, id)
	if err != nil {
		t.Fatalf("Load(%s): %v", id, err)
	}
	return snap
}

// wantErr fails the test unless errors.Is(err, want).
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: err = %v, want %v", what, err, want)
	}
}

// wantMessages fails the test unless got equals want element by element.
func wantMessages(t *testing.T, what string, got, want []*eventsv1.Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d messages, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("%s: message %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// wantSame fails the test unless the two snapshots hold the same record,
// volatile state and history.
func wantSame(t *testing.T, what string, got, want *store.Snapshot) {
	t.Helper()
	wantRecord(t, what, &got.Session, &want.Session)
	wantVolatile(t, what, &got.Volatile, &want.Volatile)
	wantMessages(t, what, got.Messages, want.Messages)
}

// wantRecord compares two session records field by field.
func wantRecord(t *testing.T, what string, got, want *store.Session) {
	t.Helper()
	switch {
	case got.ID != want.ID, got.State != want.State, got.MessageCount != want.MessageCount,
		got.Title != want.Title, got.EventSeq != want.EventSeq, got.Owner != want.Owner:
		t.Fatalf("%s: record = %+v, want %+v", what, got, want)
	case !got.CreatedAt.Equal(want.CreatedAt), !got.UpdatedAt.Equal(want.UpdatedAt),
		!got.LeaseExpires.Equal(want.LeaseExpires):
		t.Fatalf("%s: times = %v/%v/%v, want %v/%v/%v", what,
			got.CreatedAt, got.UpdatedAt, got.LeaseExpires, want.CreatedAt, want.UpdatedAt, want.LeaseExpires)
	case !proto.Equal(got.Usage, want.Usage):
		t.Fatalf("%s: usage = %v, want %v", what, got.Usage, want.Usage)
	}
	wantConfig(t, what, got.Config, want.Config)
}

// wantConfig compares two configurations, their settings byte for byte;
// nil and empty settings are equal.
func wantConfig(t *testing.T, what string, got, want store.Config) {
	t.Helper()
	if got.Model != want.Model || got.User != want.User || string(got.Spec) != string(want.Spec) {
		t.Fatalf("%s: config = model %q user %q spec %s, want model %q user %q spec %s",
			what, got.Model, got.User, got.Spec, want.Model, want.User, want.Spec)
	}
}

// wantVolatile compares two volatile states; nil and empty are equal.
func wantVolatile(t *testing.T, what string, got, want *store.Volatile) {
	t.Helper()
	fail := func(field string, g, w any) { t.Fatalf("%s: volatile %s = %v, want %v", what, field, g, w) }
	if fmt.Sprint(got.PromptQueue) != fmt.Sprint(want.PromptQueue) {
		fail("prompt queue", got.PromptQueue, want.PromptQueue)
	}
	if len(got.SteeringQueue) != len(want.SteeringQueue) {
		fail("steering queue", got.SteeringQueue, want.SteeringQueue)
	}
	for i := range got.SteeringQueue {
		if !proto.Equal(got.SteeringQueue[i], want.SteeringQueue[i]) {
			fail("steering queue", got.SteeringQueue, want.SteeringQueue)
		}
	}
	if len(got.Approvals) != len(want.Approvals) {
		fail("approvals", got.Approvals, want.Approvals)
	}
	for i, a := range got.Approvals {
		if !proto.Equal(a.Pending, want.Approvals[i].Pending) || !a.Deadline.Equal(want.Approvals[i].Deadline) {
			fail("approvals", got.Approvals, want.Approvals)
		}
	}
	switch g, w := got.Question, want.Question; {
	case (g == nil) != (w == nil):
		fail("question", g, w)
	case g != nil && (!proto.Equal(g.Pending, w.Pending) || !g.Deadline.Equal(w.Deadline)):
		fail("question", g, w)
	}
	if fmt.Sprint(got.Rules) != fmt.Sprint(want.Rules) {
		fail("rules", got.Rules, want.Rules)
	}
	if !slices.EqualFunc(got.Todos, want.Todos, func(a, b *eventsv1.Todo) bool { return proto.Equal(a, b) }) {
		fail("todos", got.Todos, want.Todos)
	}
	if !slices.Equal(got.DetachedTools, want.DetachedTools) {
		fail("detached tools", got.DetachedTools, want.DetachedTools)
	}
	if got.RunEnd != want.RunEnd {
		fail("run end", got.RunEnd, want.RunEnd)
	}
	if got.ContextUsed != want.ContextUsed || got.TokenScale != want.TokenScale {
		fail("context", [2]any{got.ContextUsed, got.TokenScale}, [2]any{want.ContextUsed, want.TokenScale})
	}
	if !slices.Equal(got.Settled, want.Settled) {
		fail("settled results", got.Settled, want.Settled)
	}
}
