package journal_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/tack-run/tack/actors/journal"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// ev is an event telling text (a status update), for telling items apart.
func ev(text string) journal.Item {
	return journal.Item{Event: events.New(&eventsv1.StatusUpdate{Text: text})}
}

// told collects what a journal tells.
type told []string

func (t *told) tell(it journal.Item) { *t = append(*t, it.Event.GetStatusUpdate().GetText()) }

func (t *told) want(tb testing.TB, what string, want ...string) {
	tb.Helper()
	if !slices.Equal(*t, want) {
		tb.Fatalf("%s: told %q, want %q", what, *t, want)
	}
	*t = nil
}

func noResend(tb testing.TB) func([]journal.Held) {
	return func(h []journal.Held) {
		if len(h) > 0 {
			tb.Fatalf("resent %v while up", h)
		}
	}
}

// TestGate: without a change, what a message emitted is told when its
// handling ends; after a change, it waits for the write that holds the
// change, and so does what follows it until that write lands.
func TestGate(t *testing.T) {
	var j journal.Journal
	var out told
	j.Add(ev("a"))
	j.Open(out.tell)
	out.want(t, "no change", "a")

	j.Add(ev("b"))
	j.Touch()
	j.Add(ev("c"))
	j.Open(out.tell)
	out.want(t, "gate shut")
	if !j.Start(false) {
		t.Fatal("no write started for a change")
	}
	j.Add(ev("d")) // after the write started, but no change: it goes with it
	j.Landed(noResend(t), out.tell)
	out.want(t, "landed", "b", "c", "d")
	if !j.Settled() {
		t.Fatal("not settled after everything was told")
	}
	if j.Start(false) {
		t.Fatal("a write started with nothing to write")
	}
}

// TestChangeDuringWrite: a change made while a write is under way keeps
// the gate shut when it lands: only what waited when it started is told;
// the next write tells the rest.
func TestChangeDuringWrite(t *testing.T) {
	var j journal.Journal
	var out told
	j.Touch()
	j.Add(ev("one"))
	j.Start(false)
	j.Touch()
	j.Add(ev("two"))
	if j.Start(false) {
		t.Fatal("a second write started while one is under way")
	}
	j.Landed(noResend(t), out.tell)
	out.want(t, "first write", "one")
	j.Open(out.tell)
	out.want(t, "gate still shut")
	if !j.Start(false) {
		t.Fatal("the change made meanwhile started no write")
	}
	j.Landed(noResend(t), out.tell)
	out.want(t, "second write", "two")
}

// TestRetries: a failed write is tried again after each of Retries, then
// given up; a lease another node holds is never retried.
func TestRetries(t *testing.T) {
	var j journal.Journal
	j.Touch()
	j.Start(false)
	for i, want := range journal.Retries {
		if !j.Writing() {
			t.Fatalf("try %d: not writing", i+1)
		}
		d, ok := j.Failed(true)
		if !ok || d != want {
			t.Fatalf("failure %d: retry %v %v, want %v", i+1, d, ok, want)
		}
		if j.Start(false) {
			t.Fatal("a write started while the retry waits")
		}
		if j.Writing() {
			t.Fatal("writing while the retry waits")
		}
		j.Retry()
		if !j.Start(false) {
			t.Fatal("the retry started no write")
		}
	}
	if _, ok := j.Failed(true); ok {
		t.Fatal("retried past Retries")
	}
	if j.Writing() {
		t.Fatal("writing after the retries were spent")
	}
	var k journal.Journal
	k.Touch()
	k.Start(false)
	if _, ok := k.Failed(false); ok {
		t.Fatal("retried a write that must not be")
	}
}

// TestDown: a write that failed for good drops what waited; while down,
// a command that needs a write is held and a try is asked for, which holds
// nothing back; when it lands the held commands go through.
func TestDown(t *testing.T) {
	var j journal.Journal
	var out told
	j.Touch()
	j.Add(ev("lost"))
	j.Start(false)
	if j.Hold(journal.Held{Msg: "x"}) {
		t.Fatal("held a command while up")
	}
	j.Failed(false)
	err := errors.New("disk full")
	dropped, refused, first := j.Down(err)
	if len(dropped) != 1 || len(refused) != 0 || !first || j.Err() != err {
		t.Fatalf("down: dropped %d, refused %d, first %v, err %v", len(dropped), len(refused), first, j.Err())
	}
	if j.Start(true) {
		t.Fatal("a due write started while down")
	}
	if !j.Hold(journal.Held{Msg: "prompt"}) {
		t.Fatal("a command was not held while down")
	}
	j.Add(ev("read")) // an answer to a read while down is not held back
	if !j.Start(false) {
		t.Fatal("the hold asked for no try")
	}
	j.Open(out.tell)
	out.want(t, "while the try is under way", "read")
	var resent []journal.Held
	j.Landed(func(h []journal.Held) { resent = h }, out.tell)
	if len(resent) != 1 || resent[0].Msg != "prompt" || j.Err() != nil {
		t.Fatalf("after the try landed: resent %v, err %v", resent, j.Err())
	}

	j.Touch()
	j.Start(false)
	j.Failed(false)
	j.Down(err)
	j.Hold(journal.Held{Msg: "again"})
	j.Start(false)
	j.Failed(true) // no retry while down
	if _, refused, first := j.Down(err); len(refused) != 1 || first {
		t.Fatalf("the failed try: refused %d, first %v", len(refused), first)
	}
}

// TestDrop: a stopping session's Drop hands back what waited to be told
// and the commands held while down, and leaves the journal empty.
func TestDrop(t *testing.T) {
	var j journal.Journal
	j.Touch()
	j.Start(false)
	j.Add(ev("x"))
	j.Failed(false)
	j.Down(errors.New("down"))
	j.Add(ev("read"))
	j.Hold(journal.Held{Msg: "prompt"})
	items, held := j.Drop()
	if len(items) != 1 || items[0].Event.GetStatusUpdate().GetText() != "read" || len(held) != 1 || held[0].Msg != "prompt" {
		t.Fatalf("dropped %v and %v, want the read's answer and the held prompt", items, held)
	}
	if items, held := j.Drop(); len(items)+len(held) != 0 {
		t.Fatalf("a second Drop returned %v and %v", items, held)
	}
}

// TestDueWrite: an event sequence far past the stored one starts a write
// with no change, as a change would.
func TestDueWrite(t *testing.T) {
	var j journal.Journal
	var out told
	if !j.Start(true) {
		t.Fatal("a due write did not start")
	}
	j.Add(ev("x"))
	j.Open(out.tell)
	out.want(t, "while the due write is under way")
	j.Landed(noResend(t), out.tell)
	out.want(t, "landed", "x")
}
