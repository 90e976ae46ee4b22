package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/tack-run/tack"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve runs lines through a fresh connection and returns the responses in
// order (events are left out).
func serve(t *testing.T, lines ...string) []map[string]any {
	t.Helper()
	rt, err := tack.New()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	var out bytes.Buffer
	if err := Serve(context.Background(), rt, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	var resps []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("output line is not JSON: %q", l)
		}
		if m["type"] == "response" {
			resps = append(resps, m)
		}
	}
	return resps
}

const create = `{"cmd":"create_session","session":"s","script":{"turns":[{"text":"hi"}]}}`

// TestErrorScenarios: each bad line gets its protocol error code and the
// connection keeps serving the next line.
func TestErrorScenarios(t *testing.T) {
	cases := []struct {
		name, line, code string
	}{
		{"not JSON", `{"cmd":`, "bad_request"},
		{"not an object", `[1,2]`, "bad_request"},
		{"no cmd", `{"session":"s"}`, "bad_request"},
		{"cmd not a string", `{"cmd":7}`, "bad_request"},
		{"unknown command", `{"cmd":"dance","session":"s"}`, "unknown_command"},
		{"no session", `{"cmd":"prompt","text":"x"}`, "bad_request"},
		{"unknown session", `{"cmd":"prompt","session":"zz","text":"x"}`, "invalid_session"},
		{"missing text", `{"cmd":"prompt","session":"s"}`, "bad_request"},
		{"text of the wrong type", `{"cmd":"prompt","session":"s","text":5}`, "bad_request"},
		{"missing steer text", `{"cmd":"steer","session":"s"}`, "bad_request"},
		{"bad kill_tools", `{"cmd":"abort","session":"s","kill_tools":"some"}`, "bad_request"},
		{"approve without id", `{"cmd":"approve","session":"s"}`, "bad_request"},
		{"approve nothing pending", `{"cmd":"approve","session":"s","approval_id":"ap-1"}`, "no_pending_approval"},
		{"reject nothing pending", `{"cmd":"reject","session":"s","approval_id":"ap-1","reason":"no"}`, "no_pending_approval"},
		{"respond nothing pending", `{"cmd":"respond","session":"s","ref":"q-1","response":"yes"}`, "no_pending_question"},
		{"unknown model", `{"cmd":"switch_model","session":"s","model":"gpt-nothing"}`, "unknown_model"},
		{"bad subscribe type", `{"cmd":"subscribe","session":"s","types":["no_such_event"]}`, "bad_request"},
		{"create with unknown model", `{"cmd":"create_session","model":"script:/no/such/file.json"}`, "unknown_model"},
		{"create with unknown tool", `{"cmd":"create_session","model":"script:demo","tools":["teleport"]}`, "unknown_tool"},
		{"create with a taken id", `{"cmd":"create_session","session":"s","model":"script:demo"}`, "bad_request"},
		{"create with a bad script", `{"cmd":"create_session","script":{"turns":"no"}}`, "bad_request"},
		{"create without a model", `{"cmd":"create_session","session":"t"}`, "bad_request"},
		{"unknown field", `{"cmd":"prompt","session":"s","text":"x","txt":"y"}`, "bad_request"},
		{"field of a command without fields", `{"cmd":"close_session","session":"s","now":true}`, "bad_request"},
		{"not implemented yet", `{"cmd":"compact","session":"s"}`, "bad_request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resps := serve(t, create, c.line, `{"cmd":"get_state","id":"after","session":"s"}`)
			if len(resps) != 3 {
				t.Fatalf("got %d responses, want 3: %v", len(resps), resps)
			}
			bad := resps[1]
			code, _ := bad["error"].(map[string]any)["code"].(string)
			if bad["ok"] != false || code != c.code {
				t.Fatalf("response %v, want error %s", bad, c.code)
			}
			if after := resps[2]; after["ok"] != true || after["id"] != "after" {
				t.Fatalf("the connection stopped serving: %v", after)
			}
		})
	}
}

func TestIDIsEchoed(t *testing.T) {
	resps := serve(t, `{"cmd":"list_sessions","id":"x-1"}`, `{"cmd":"list_sessions","id":42}`, `{"cmd":"list_sessions"}`)
	if resps[0]["id"] != "x-1" || resps[1]["id"] != float64(42) || resps[2]["id"] != nil {
		t.Fatalf("ids: %v %v %v", resps[0]["id"], resps[1]["id"], resps[2]["id"])
	}
}
