package codec

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
)

func TestVolatileRoundTrip(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	tests := []struct {
		name string
		in   store.Volatile
	}{
		{"empty", store.Volatile{}},
		{"queues", store.Volatile{PromptQueue: []string{"a", ""}, SteeringQueue: []*eventsv1.SteeringItem{{Ref: "r", Text: "t"}}}},
		{"queues with images", store.Volatile{PromptQueue: []string{"a", "b"}, PromptImages: [][]*eventsv1.Image{nil, {{Url: "https://x/a.png", Detail: "low"}}},
			SteeringQueue: []*eventsv1.SteeringItem{{Ref: "r", Text: "t"}}, SteeringImages: map[string][]*eventsv1.Image{"r": {{Url: "https://x/b.png"}}}}},
		{"approval with deadline", store.Volatile{Approvals: []store.Approval{{Pending: &eventsv1.PendingApproval{ApprovalId: "a", Args: &eventsv1.RawJSON{Json: []byte(`{"x": 1.50}`)}}, Deadline: at}}}},
		{"approval without deadline", store.Volatile{Approvals: []store.Approval{{Pending: &eventsv1.PendingApproval{ApprovalId: "a"}}}}},
		{"question", store.Volatile{Question: &store.Question{Pending: &eventsv1.PendingQuestion{Ref: "q", Options: []string{"y", "n"}}, Deadline: at}}},
		{"rules", store.Volatile{Rules: []store.Rule{{Tool: "shell", CommandFamily: "git"}, {Tool: "read"}}}},
		{"todos and detached tools", store.Volatile{Todos: []*eventsv1.Todo{{Text: "a", Status: "done"}}, DetachedTools: []string{"sleep"}}},
		{"settled results", store.Volatile{Settled: []store.Settled{{CallID: "c-2", Content: "ok"}, {CallID: "c-3", Content: "failed", IsError: true}}}},
		{"an import not started yet", store.Volatile{Unstarted: true, Todos: []*eventsv1.Todo{{Text: "a", Status: "pending"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := EncodeVolatile(&tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if b == nil {
				t.Fatal("nil bytes would be stored as NULL")
			}
			got, err := DecodeVolatile(b)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := EncodeVolatile(&got)
			if string(again) != string(b) {
				t.Fatalf("round trip changed the encoding: %+v", got)
			}
			for i, a := range got.Approvals {
				if !a.Deadline.Equal(tc.in.Approvals[i].Deadline) || !proto.Equal(a.Pending, tc.in.Approvals[i].Pending) {
					t.Fatalf("approval %d = %+v", i, a)
				}
			}
			if q := got.Question; q != nil && (!q.Deadline.Equal(tc.in.Question.Deadline) || q.Deadline.Location() != time.UTC) {
				t.Fatalf("question deadline %v", q.Deadline)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	garbage := []byte{0xff, 0xff, 0xff}
	if _, err := DecodeVolatile(garbage); err == nil {
		t.Error("DecodeVolatile(garbage) succeeded")
	}
	if _, err := DecodeMessage(garbage); err == nil {
		t.Error("DecodeMessage(garbage) succeeded")
	}
}

func TestMessages(t *testing.T) {
	tests := []struct {
		name string
		in   []*eventsv1.Message
		ok   bool
	}{
		{"ok", []*eventsv1.Message{{Role: "user", Content: "hi"}, {}}, true},
		{"nil", []*eventsv1.Message{{Role: "user"}, nil}, false},
		{"invalid UTF-8", []*eventsv1.Message{{Content: "\xff"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Messages(tc.in, 5)
			if !tc.ok {
				if !errors.Is(err, store.ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, b := range out {
				if b == nil {
					t.Fatalf("message %d encodes to nil", i)
				}
				m, err := DecodeMessage(b)
				if err != nil || !proto.Equal(m, tc.in[i]) {
					t.Fatalf("message %d: %v, %v", i, m, err)
				}
			}
		})
	}
}
