package llm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		in   []*Message
		want string // substring of the error; "" means valid
	}{
		{"empty", nil, ""},
		{"plain chat", []*Message{UserMessage("hi"), asst("hello")}, ""},
		{"results in any order", []*Message{UserMessage("go"), asst("", "c-1", "c-2"), result("c-2"), result("c-1"), asst("done")}, ""},
		{"consecutive users are fine", []*Message{UserMessage("a"), UserMessage("b")}, ""},
		{"unknown role", []*Message{UserMessage("a"), {Role: "system", Content: "x"}}, `message 1 has unknown role "system"`},
		{"nil message", []*Message{nil}, `message 0 has unknown role ""`},
		{"call without id", []*Message{asst("", "")}, "message 0 has a tool call"},
		{"id reused in one message", []*Message{asst("", "c-1", "c-1"), result("c-1")}, `message 0 reuses tool call id "c-1"`},
		{"id reused later", []*Message{asst("", "c-1"), result("c-1"), asst("", "c-1"), result("c-1")}, `message 2 reuses tool call id "c-1"`},
		{"missing at end", []*Message{UserMessage("go"), asst("", "c-1")}, `tool call "c-1" of message 1 has no result`},
		{"missing before user", []*Message{asst("", "c-1", "c-2"), result("c-1"), UserMessage("next")}, `tool call "c-2" of message 0 has no result`},
		{"result after next user", []*Message{asst("", "c-1"), UserMessage("x"), result("c-1")}, `tool call "c-1" of message 0 has no result`},
		{"orphan", []*Message{UserMessage("a"), result("c-9")}, `message 1 is a tool result for "c-9"`},
		{"duplicate", []*Message{asst("", "c-1"), result("c-1"), result("c-1")}, `message 2 is a second tool result for "c-1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.in)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate: %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestRepair(t *testing.T) {
	const gap = "t:%s=" + NoResultText + "!"
	tests := []struct {
		name  string
		in    []*Message
		want  string
		fixes int
	}{
		{"valid unchanged", []*Message{UserMessage("go"), asst("", "c-1"), result("c-1"), asst("ok")},
			"u:go | a:[c-1] | t:c-1=ok c-1 | a:ok[]", 0},
		{"missing result placed after the others", []*Message{asst("", "c-1", "c-2", "c-3"), result("c-2"), UserMessage("next")},
			"a:[c-1 c-2 c-3] | t:c-2=ok c-2 | " + fmt.Sprintf(gap, "c-1") + " | " + fmt.Sprintf(gap, "c-3") + " | u:next", 2},
		{"missing at end", []*Message{UserMessage("go"), asst("", "c-1")},
			"u:go | a:[c-1] | " + fmt.Sprintf(gap, "c-1"), 1},
		{"orphan dropped", []*Message{UserMessage("a"), result("c-9"), asst("b")}, "u:a | a:b[]", 1},
		{"duplicate dropped", []*Message{asst("", "c-1"), result("c-1"), result("c-1")}, "a:[c-1] | t:c-1=ok c-1", 1},
		{"late result replaced", []*Message{asst("", "c-1"), UserMessage("x"), result("c-1")},
			"a:[c-1] | " + fmt.Sprintf(gap, "c-1") + " | u:x", 2},
		{"unknown role dropped", []*Message{{Role: "system"}, UserMessage("a")}, "u:a", 1},
		{"reused id dropped with its result", []*Message{asst("", "c-1"), result("c-1"), asst("", "c-1", "c-2"), result("c-1"), result("c-2")},
			"a:[c-1] | t:c-1=ok c-1 | a:[c-2] | t:c-2=ok c-2", 2},
		{"call without id dropped", []*Message{asst("x", "", "c-1"), result("c-1")}, "a:x[c-1] | t:c-1=ok c-1", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := cloneAll(tt.in)
			out, fixes := Repair(tt.in)
			if b := brief(out); b != tt.want {
				t.Errorf("got  %q\nwant %q", b, tt.want)
			}
			if len(fixes) != tt.fixes {
				t.Errorf("fixes = %q, want %d", fixes, tt.fixes)
			}
			if err := Validate(out); err != nil {
				t.Errorf("repaired history invalid: %v", err)
			}
			assertUnchanged(t, tt.in, before)
		})
	}
}

func TestRepairFixesSayWhat(t *testing.T) {
	_, fixes := Repair([]*Message{asst("", "c-1"), result("c-7")})
	want := []string{
		`message 1 is a tool result for "c-7", which the assistant message before it did not call: dropped the result`,
		`tool call "c-1" of message 0 has no result: added an error result "interrupted: no result was recorded"`,
	}
	if !slices.Equal(fixes, want) {
		t.Fatalf("fixes:\n%q\nwant\n%q", fixes, want)
	}
}

// TestRepairProperties checks, for many random histories, that Repair's
// output is valid, that Repair of a valid history is the identity, and
// that Repair leaves its input alone.
func TestRepairProperties(t *testing.T) {
	for seed := range uint64(3000) {
		h := randomHistory(rand.New(rand.NewPCG(seed, 42)))
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			before := cloneAll(h)
			out, fixes := Repair(h)
			if err := Validate(out); err != nil {
				t.Fatalf("Validate(Repair(h)) = %v\nh:   %s\nout: %s\nfixes: %q", err, brief(h), brief(out), fixes)
			}
			if valid := Validate(h) == nil; valid != (len(fixes) == 0) {
				t.Fatalf("Validate(h) valid = %v but Repair made %d fixes: %q\nh: %s", valid, len(fixes), fixes, brief(h))
			}
			again, more := Repair(out)
			if len(more) != 0 || !sameSlice(again, out) {
				t.Fatalf("Repair of a valid history changed it: %q\nout: %s", more, brief(out))
			}
			assertUnchanged(t, h, before)
		})
	}
}

// sameSlice reports whether a and b are the same slice (same backing
// array and length), not only equal.
func sameSlice(a, b []*Message) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// randomHistory mixes every kind of message, with ids from a small set so
// that duplicates, orphans and gaps are common.
func randomHistory(r *rand.Rand) []*Message {
	ids := []string{"", "c-1", "c-2", "c-3", "c-4", "c-5"}
	n := r.IntN(12)
	var h []*Message
	for range n {
		switch r.IntN(10) {
		case 0, 1:
			h = append(h, UserMessage("u"))
		case 2, 3, 4:
			var calls []string
			for range r.IntN(4) {
				calls = append(calls, ids[r.IntN(len(ids))])
			}
			h = append(h, asst("a", calls...))
		case 5, 6, 7, 8:
			h = append(h, result(ids[r.IntN(len(ids))]))
		default:
			h = append(h, &Message{Role: "system"})
		}
	}
	return h
}

func BenchmarkValidate(b *testing.B) {
	var h []*Message
	for i := range 50 {
		id := fmt.Sprintf("c-%d", i)
		h = append(h, UserMessage("q"), asst("", id), result(id), asst("a"))
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := Validate(h); err != nil {
			b.Fatal(err)
		}
	}
}
