package command

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/events/eventjson"
)

// FuzzDecode decodes arbitrary fields for a command name: it must
// not panic, a failure is bad_request or unknown_command with a message,
// and what it accepts reads back the same after a write.
func FuzzDecode(f *testing.F) {
	for _, s := range [][2]string{
		{"abort", `{"kill_tools":"all","clear_queue":true}`},
		{"abort", `{"kill_tool":"all"}`},
		{"create_session", `{"session":"s","model":"script:demo","tools":["echo"],"plugins":[{"name":"p","config":{"a":[1]}}],"script":{"turns":[]}}`},
		{"create_session", `{"plugins":[{"name":"p","cfg":1}]}`},
		{"steer", `{"text":"x","interrupt_tools":false}`},
		{"subscribe", `{"since":1e3,"types":["tool_*"]}`},
		{"prompt", `{}`},
		{"close_session", `{"x":null}`},
		{"dance", `{}`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, body string) {
		obj, err := eventjson.ParseObject([]byte(body))
		if err != nil {
			return
		}
		msg, err := Decode(name, obj)
		if err != nil {
			var te *tack.Error
			if !errors.As(err, &te) || te.Message == "" || te.Code != events.CodeBadRequest && te.Code != events.CodeUnknownCommand {
				t.Fatalf("Decode(%q, %s) = %#v, want bad_request or unknown_command with a message", name, body, err)
			}
			if known := Known(name); known == (te.Code == events.CodeUnknownCommand) {
				t.Fatalf("Decode(%q, %s) = %v", name, body, err)
			}
			return
		}
		data, err := eventjson.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		again, err := eventjson.ParseObject(data)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decode(name, again)
		if err != nil {
			t.Fatalf("reading back %s: %v", data, err)
		}
		if !proto.Equal(msg, back) {
			t.Fatalf("round trip of %s changed %v into %v", data, msg, back)
		}
	})
}
