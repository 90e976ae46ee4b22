package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tack-run/tack"
)

// TestForkOverRPC: fork answers the new session's id, and the connection
// writes its events like a created session's: session_created, then
// session_forked naming the source and the index used.
func TestForkOverRPC(t *testing.T) {
	rt, err := tack.New()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	var out bytes.Buffer
	in := strings.Join([]string{create,
		`{"cmd":"fork","id":"f","session":"s","index":0,"new_session":"s2"}`,
		`{"cmd":"get_messages","id":"m","session":"s2"}`}, "\n") + "\n"
	if err := Serve(context.Background(), rt, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	var forked []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("output line is not JSON: %q", l)
		}
		switch {
		case m["id"] == "f":
			if d, _ := m["data"].(map[string]any); m["ok"] != true || d["session"] != "s2" {
				t.Errorf("fork response %v", m)
			}
		case m["id"] == "m":
			if m["ok"] != true {
				t.Errorf("get_messages of the fork: %v", m)
			}
		case m["session"] == "s2":
			forked = append(forked, m["type"].(string))
			if m["type"] == "session_forked" && (m["from_session"] != "s" || m["index"] != float64(0)) {
				t.Errorf("session_forked %v", m)
			}
		}
	}
	if !slices.Equal(forked, []string{"session_created", "session_forked"}) {
		t.Errorf("the fork's events %q", forked)
	}
}
