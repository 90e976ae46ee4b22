package llm

import (
	"testing"

	"google.golang.org/protobuf/proto"
)

func TestMergeSameRole(t *testing.T) {
	tests := []struct {
		name string
		in   []*Message
		want string
	}{
		{"empty", nil, ""},
		{"alternating untouched", []*Message{UserMessage("a"), asst("b"), UserMessage("c")}, "u:a | a:b[] | u:c"},
		{"users merge", []*Message{UserMessage("a"), UserMessage("b"), UserMessage("c")}, "u:a\n\nb\n\nc"},
		{"empty content skipped", []*Message{UserMessage("a"), UserMessage(""), UserMessage("c")}, "u:a\n\nc"},
		{"assistants merge with calls", []*Message{asst("x"), asst("y", "c-1", "c-2"), result("c-1"), result("c-2")},
			"a:x\n\ny[c-1 c-2] | t:c-1=ok c-1 | t:c-2=ok c-2"},
		{"assistant calls concatenated", []*Message{asst("", "c-1"), asst("z", "c-2")}, "a:z[c-1 c-2]"},
		{"tools never merge", []*Message{asst("", "c-1", "c-2"), result("c-1"), result("c-2")},
			"a:[c-1 c-2] | t:c-1=ok c-1 | t:c-2=ok c-2"},
		{"runs separated by tool", []*Message{asst("", "c-1"), result("c-1"), UserMessage("a"), UserMessage("b"), asst("c"), asst("d")},
			"a:[c-1] | t:c-1=ok c-1 | u:a\n\nb | a:c\n\nd[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := cloneAll(tt.in)
			got := MergeSameRole(tt.in)
			if b := brief(got); b != tt.want {
				t.Fatalf("got  %q\nwant %q", b, tt.want)
			}
			assertUnchanged(t, tt.in, before)
		})
	}
}

func TestMergeSameRoleJoinsThinking(t *testing.T) {
	a, b := asst("x"), asst("y")
	a.Thinking, b.Thinking = "hmm", "aha"
	got := MergeSameRole([]*Message{a, b})
	if len(got) != 1 || got[0].GetThinking() != "hmm\n\naha" {
		t.Fatalf("got %v", got)
	}
}

func TestMergeSameRoleSharesNothingMerged(t *testing.T) {
	in := []*Message{asst("", "c-1"), asst("", "c-2")}
	got := MergeSameRole(in)
	got[0].ToolCalls[0].Id = "changed"
	if in[0].ToolCalls[0].GetId() != "c-1" {
		t.Fatal("a merged message shares its tool calls with the input")
	}
}

func cloneAll(msgs []*Message) []*Message {
	out := make([]*Message, len(msgs))
	for i, m := range msgs {
		out[i] = proto.Clone(m).(*Message)
	}
	return out
}

func assertUnchanged(t *testing.T, msgs, before []*Message) {
	t.Helper()
	if len(msgs) != len(before) {
		t.Fatalf("input length changed: %d, was %d", len(msgs), len(before))
	}
	for i := range msgs {
		if !proto.Equal(msgs[i], before[i]) {
			t.Fatalf("input message %d changed: %v, was %v", i, msgs[i], before[i])
		}
	}
}
