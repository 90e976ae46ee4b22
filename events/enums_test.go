package events_test

import (
	"testing"

	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// The command options a client may send, and the bad_request message of
// each value it may not: the wire's words, as docs/protocol.md has them.
func TestCheckOptions(t *testing.T) {
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	cases := []struct {
		name string
		err  error
		want string // "" when allowed
	}{
		{"prompt defaults", events.CheckPrompt(&eventsv1.Prompt{}), ""},
		{"if_busy queue", events.CheckPrompt(&eventsv1.Prompt{IfBusy: "queue"}), ""},
		{"if_busy steer", events.CheckPrompt(&eventsv1.Prompt{IfBusy: "steer"}), ""},
		{"if_busy reject", events.CheckPrompt(&eventsv1.Prompt{IfBusy: "reject"}), ""},
		{"if_busy interrupt", events.CheckPrompt(&eventsv1.Prompt{IfBusy: "interrupt"}), ""},
		{"if_busy rollback", events.CheckPrompt(&eventsv1.Prompt{IfBusy: "rollback"}), ""},
		{"if_busy unknown", events.CheckPrompt(&eventsv1.Prompt{IfBusy: "later"}),
			`if_busy is queue, steer, reject, interrupt or rollback, not "later"`},
		{"if_busy in capitals", events.CheckPrompt(&eventsv1.Prompt{IfBusy: "Queue"}),
			`if_busy is queue, steer, reject, interrupt or rollback, not "Queue"`},
		{"traceparent", events.CheckPrompt(&eventsv1.Prompt{Traceparent: parent}), ""},
		{"traceparent zero trace id", events.CheckPrompt(&eventsv1.Prompt{Traceparent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}),
			`traceparent "00-00000000000000000000000000000000-00f067aa0ba902b7-01" is not a W3C trace context (00-<32 hex trace id>-<16 hex span id>-<2 hex flags>)`},
		{"abort defaults", events.CheckAbort(&eventsv1.Abort{}), ""},
		{"kill_tools and at", events.CheckAbort(&eventsv1.Abort{KillTools: "none", At: "after_tools", TimeoutMs: 5}), ""},
		{"kill_tools unknown", events.CheckAbort(&eventsv1.Abort{KillTools: "some"}),
			`kill_tools is killable, all or none, not "some"`},
		{"at unknown", events.CheckAbort(&eventsv1.Abort{At: "soon"}),
			`at is now, after_response or after_tools, not "soon"`},
		{"timeout negative", events.CheckAbort(&eventsv1.Abort{TimeoutMs: -1}),
			"timeout_ms must not be negative, not -1"},
		{"queue_mode default", events.CheckQueueMode(""), ""},
		{"queue_mode all", events.CheckQueueMode(events.QueueAll), ""},
		{"queue_mode unknown", events.CheckQueueMode("some"),
			`queue_mode is one_at_a_time or all, not "some"`},
	}
	for _, c := range cases {
		got := ""
		if c.err != nil {
			got = c.err.Error()
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
