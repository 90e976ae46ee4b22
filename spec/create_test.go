package spec

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack/events/eventjson"
	eventsv1 "github.com/tack-run/tack/events/v1"
)

// TestCreateRoundTrip: Create gives back the create_session message
// a SessionConfig was made from, option by option.
func TestCreateRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		json string
	}{
		{"bare", `{"session":"s"}`},
		{"model", `{"session":"s","model":"gpt","system":"be brief","tools":["read","grep"],"queue_mode":"all"}`},
		{"script", `{"session":"s","script":{"turns":[{"text":"hi"}]}}`},
		{"plugins", `{"session":"s","plugins":[{"name":"a","config":{"x":1}},{"name":"b"}]}`},
		{"context", `{"session":"s","context":{"max_messages":5,"max_tokens":900,"max_percent":50,"compact_at_percent":80,"keep_recent":0,"compact_model":"small"}}`},
		{"empty context", `{"session":"s","context":{}}`},
		{"subagents", `{"session":"s","subagents":{"max_depth":2,"model":"m","tools":["read"],"inherit_plugins":false}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &eventsv1.CreateSession{}
			if err := eventjson.Unmarshal([]byte(tc.json), m); err != nil {
				t.Fatal(err)
			}
			cfg := FromCreate(m, "alice")
			if cfg.User != "alice" {
				t.Fatalf("user %q", cfg.User)
			}
			if got := cfg.Create(); !proto.Equal(got, m) {
				t.Fatalf("Create\n got %v\nwant %v", got, m)
			}
		})
	}
}
