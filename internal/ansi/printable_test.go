package ansi

import (
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"google.golang.org/protobuf/proto"
)

func TestPrintable(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain", "ls -la\tx\n", "ls -la\tx\n"},
		{"clipboard write (OSC 52)", "hi\x1b]52;c;cm0gLXJmIH4K\x07", "hi^[]52;c;cm0gLXJmIH4K^G"},
		{"cursor up and erase", "ok\x1b[1A\x1b[2K", "ok^[[1A^[[2K"},
		{"8-bit CSI", "a\u009b2Jb", "a<U+009B>2Jb"},
		{"backspace", "ls\b\brm", "ls^H^Hrm"},
		{"DEL and NUL", "a\x7fb\x00", "a^?b^@"},
		{"CRLF ends a line", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"a lone CR overwrites nothing", "rm -rf ~\rls      ", "rm -rf ~ls      "},
		{"right-to-left override", "echo \u202ehs.live", "echo <U+202E>hs.live"},
		{"isolates and marks", "\u2066a\u2069\u200f", "<U+2066>a<U+2069><U+200F>"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"a real U+FFFD stays", "a\uFFFDb\x1b", "a\uFFFDb^["},
		{"other text stays", "héllo — ✓ 日本", "héllo — ✓ 日本"},
	} {
		if got := Printable(c.in); got != c.want {
			t.Errorf("%s: Printable(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func TestPrintableKeepsCleanStrings(t *testing.T) {
	s := "nothing to clean here\n"
	if n := testing.AllocsPerRun(100, func() { _ = Printable(s) }); n != 0 {
		t.Errorf("Printable of a clean string allocated %v times", n)
	}
}

func TestPrintableMessage(t *testing.T) {
	ev := &eventsv1.Event{Session: "s", Payload: &eventsv1.Event_ApprovalRequired{ApprovalRequired: &eventsv1.ApprovalRequired{
		ApprovalId: "a1", Tool: "shell\x1b[2K",
		Args: &eventsv1.RawJSON{Json: []byte(`{"command":"ls"}` + "\x1b[1A")},
	}}}
	orig := proto.Clone(ev)
	got := PrintableMessage(ev)
	a := got.GetApprovalRequired()
	if a.Tool != "shell^[[2K" || string(a.Args.Json) != `{"command":"ls"}^[[1A` || a.ApprovalId != "a1" {
		t.Errorf("cleaned: tool %q, args %q, id %q", a.Tool, a.Args.Json, a.ApprovalId)
	}
	if !proto.Equal(ev, orig) {
		t.Error("PrintableMessage changed the event it was given")
	}

	clean := &eventsv1.Event{Session: "s", Payload: &eventsv1.Event_MessageDelta{MessageDelta: &eventsv1.MessageDelta{Delta: "fine\n"}}}
	if PrintableMessage(clean) != clean {
		t.Error("a clean event was copied")
	}

	list := &eventsv1.Event{Payload: &eventsv1.Event_AskUser{AskUser: &eventsv1.AskUser{Question: "q", Options: []string{"yes", "no\x1b[8m"}}}}
	if o := PrintableMessage(list).GetAskUser().Options; o[0] != "yes" || o[1] != "no^[[8m" {
		t.Errorf("options %q", o)
	}
}
