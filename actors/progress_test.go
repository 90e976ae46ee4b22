package actors

import (
	"strings"
	"testing"
)

// reported is a call's progress holding s, as its tool reported it.
func reported(s string) *progress {
	pr := &progress{}
	pr.add(s)
	return pr
}

// TestProgress: reports gather until taken, the first of them asks for a
// toolUpdate and the rest do not until the session has taken them; past
// maxProgress between two takes the rest is counted, not kept, until
// the next take.
func TestProgress(t *testing.T) {
	pr := &progress{}
	if !pr.add("a\n") {
		t.Fatal("the first report did not ask for a toolUpdate")
	}
	if pr.add("b\n") || pr.add("c\n") {
		t.Fatal("a report asked for a second toolUpdate while one waits")
	}
	if got := pr.take(); got != "a\nb\nc\n" {
		t.Fatalf("take = %q", got)
	}
	if got := pr.take(); got != "" {
		t.Fatalf("a second take = %q, want nothing", got)
	}
	if !pr.add("d\n") {
		t.Fatal("a report after a take did not ask for a toolUpdate")
	}
	pr.take()

	big := strings.Repeat("x", maxProgress-1)
	pr.add(big)
	pr.add("yy")
	pr.add("z")
	if got, want := pr.take(), big+"[3 bytes of progress not relayed]\n"; got != want {
		t.Fatalf("take past the bound = …%q, want …%q", got[len(got)-40:], want[len(want)-40:])
	}
}
