package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// TestErrorScenarios: each bad line gets its protocol error code and a
// message naming what was wrong, and the connection keeps serving the
// next line.
func TestErrorScenarios(t *testing.T) {
	cases := []struct {
		name, line, code, message string
	}{
		{"not JSON", `{"cmd":`, "bad_request", "invalid JSON: unexpected end of JSON input"},
		{"not an object", `[1,2]`, "bad_request", "expected a JSON object"},
		{"only space", ` `, "bad_request", "invalid JSON"},
		{"no cmd", `{"session":"s"}`, "bad_request", `a command needs "cmd"`},
		{"cmd not a string", `{"cmd":7}`, "bad_request", `field "cmd": expected a string`},
		{"session not a string", `{"cmd":"get_state","session":7}`, "bad_request", `field "session": expected a string`},
		{"unknown command", `{"cmd":"dance","session":"s"}`, "unknown_command", `unknown command "dance"`},
		{"no session", `{"cmd":"prompt","text":"x"}`, "bad_request", `prompt needs "session"`},
		{"null session", `{"cmd":"prompt","session":null,"text":"x"}`, "bad_request", `prompt needs "session"`},
		{"unknown session", `{"cmd":"prompt","session":"zz","text":"x"}`, "invalid_session", `no session "zz"`},
		{"missing text", `{"cmd":"prompt","session":"s"}`, "bad_request", `prompt needs "text"`},
		{"text of the wrong type", `{"cmd":"prompt","session":"s","text":5}`, "bad_request", `field "text": expected a string`},
		{"missing steer text", `{"cmd":"steer","session":"s"}`, "bad_request", `steer needs "text"`},
		{"bad kill_tools", `{"cmd":"abort","session":"s","kill_tools":"some"}`, "bad_request", `kill_tools is killable, all or none, not "some"`},
		{"misspelt abort option", `{"cmd":"abort","session":"s","kill_tool":"all"}`, "bad_request", `unknown field "kill_tool" in abort`},
		{"unknown prompt field", `{"cmd":"prompt","session":"s","text":"x","if_bisy":"queue"}`, "bad_request", `unknown field "if_bisy" in prompt`},
		{"field of a command without fields", `{"cmd":"close_session","session":"s","force":true}`, "bad_request", `unknown field "force" in close_session`},
		{"unknown field with a null value", `{"cmd":"get_state","session":"s","verbose":null}`, "bad_request", `unknown field "verbose" in get_state`},
		{"unknown create_session field", `{"cmd":"create_session","session":"t","model":"script:demo","bogus":1}`, "bad_request", `unknown field "bogus" in create_session`},
		{"unknown plugin entry field", `{"cmd":"create_session","session":"t","model":"script:demo","plugins":[{"name":"x","cfg":{}}]}`, "bad_request", `unknown field "cfg" in create_session.plugins[0]`},
		{"approve without id", `{"cmd":"approve","session":"s"}`, "bad_request", `approve needs "approval_id"`},
		{"approve nothing pending", `{"cmd":"approve","session":"s","approval_id":"ap-1"}`, "no_pending_approval", `no approval "ap-1" is pending`},
		{"reject nothing pending", `{"cmd":"reject","session":"s","approval_id":"ap-1","reason":"no"}`, "no_pending_approval", `no approval "ap-1" is pending`},
		{"respond nothing pending", `{"cmd":"respond","session":"s","ref":"q-1","response":"yes"}`, "no_pending_question", `no question "q-1" is pending`},
		{"unknown model", `{"cmd":"switch_model","session":"s","model":"gpt-nothing"}`, "unknown_model", `unknown model "gpt-nothing"`},
		{"bad subscribe type", `{"cmd":"subscribe","session":"s","types":["no_such_event"]}`, "bad_request", `unknown event type: "no_such_event"`},
		{"create with unknown model", `{"cmd":"create_session","model":"gpt-nothing"}`, "unknown_model", `unknown model "gpt-nothing"`},
		{"create with a missing script file", `{"cmd":"create_session","model":"script:no/such/file.json"}`, "unknown_model",
			`unknown model "script:no/such/file.json": script: no file no/such/file.json in the script directory: file does not exist`},
		{"create with an absolute script path", `{"cmd":"create_session","model":"script:/etc/passwd"}`, "unknown_model",
			`unknown model "script:/etc/passwd": script: a script path must be relative and stay inside the script directory`},
		{"create with a script path that leaves", `{"cmd":"create_session","model":"script:../x.json"}`, "unknown_model",
			`unknown model "script:../x.json": script: a script path must be relative and stay inside the script directory`},
		{"create with unknown tool", `{"cmd":"create_session","model":"script:demo","tools":["teleport"]}`, "unknown_tool", `unknown tool "teleport"`},
		{"create with unknown plugin", `{"cmd":"create_session","model":"script:demo","plugins":[{"name":"teleport"}]}`, "bad_request", `unknown plugin "teleport" (registered: )`},
		{"create with a taken id", `{"cmd":"create_session","session":"s","model":"script:demo"}`, "bad_request", `session "s" exists`},
		{"create with a bad script", `{"cmd":"create_session","script":{"turns":"no"}}`, "bad_request",
			`unknown model "script:inline": script: json: cannot unmarshal string into Go struct field Script.turns of type []script.Turn`},
		{"create with a misspelt script field", `{"cmd":"create_session","script":{"turns":[{"text":"a","tool_calls":[{"name":"echo","arg":{}}]}]}}`, "bad_request",
			`unknown model "script:inline": script: unknown field "arg" in turns[0].tool_calls[0]`},
		{"misspelt context option", `{"cmd":"create_session","model":"script:demo","context":{"max_mesages":3}}`, "bad_request", `unknown field "max_mesages" in create_session.context`},
		{"context option of the wrong type", `{"cmd":"create_session","model":"script:demo","context":{"keep_recent":"all"}}`, "bad_request", `field "context.keep_recent": expected an integer`},
		{"negative max_messages", `{"cmd":"create_session","model":"script:demo","context":{"max_messages":-1}}`, "bad_request", "context.max_messages must not be negative, not -1"},
		{"compact_at_percent over 100", `{"cmd":"create_session","model":"script:demo","context":{"compact_at_percent":120}}`, "bad_request", "context.compact_at_percent must be from 0 to 100, not 120"},
		{"negative keep_recent", `{"cmd":"create_session","model":"script:demo","context":{"keep_recent":-2}}`, "bad_request", "context.keep_recent must not be negative, not -2"},
		{"unknown compact_model", `{"cmd":"create_session","model":"script:demo","context":{"compact_model":"gpt-nothing"}}`, "unknown_model", `unknown model "gpt-nothing"`},
		{"negative subagents.max_depth", `{"cmd":"create_session","model":"script:demo","subagents":{"max_depth":-1}}`, "bad_request", "subagents.max_depth must not be negative, not -1"},
		{"misspelt subagents option", `{"cmd":"create_session","model":"script:demo","subagents":{"max_deep":2}}`, "bad_request", `unknown field "max_deep" in create_session.subagents`},
		{"create without a model", `{"cmd":"create_session","session":"t"}`, "bad_request", "a session needs a model or a script, and no default_model is configured"},
		{"attach an unknown tool", `{"cmd":"attach_tools","session":"s","names":["echo","teleport"]}`, "unknown_tool", `unknown tool "teleport"; nothing was changed`},
		{"detach a tool the session lacks", `{"cmd":"detach_tools","session":"s","names":["todo_write"]}`, "unknown_tool", `the session has no tool "todo_write"; nothing was changed`},
		{"attach without names", `{"cmd":"attach_tools","session":"s"}`, "bad_request", `attach_tools needs "names"`},
		{"attach no names", `{"cmd":"attach_tools","session":"s","names":[]}`, "bad_request", `attach_tools needs at least one name in "names"`},
		{"detach no names", `{"cmd":"detach_tools","session":"s","names":[]}`, "bad_request", `detach_tools needs at least one name in "names"`},
		{"names of the wrong type", `{"cmd":"detach_tools","session":"s","names":"echo"}`, "bad_request", `field "names": expected an array`},
		{"a name of the wrong type", `{"cmd":"attach_tools","session":"s","names":[7]}`, "bad_request", `field "names[0]": expected a string`},
		{"misspelt attach field", `{"cmd":"attach_tools","session":"s","name":["echo"]}`, "bad_request", `unknown field "name" in attach_tools`},
		{"unknown if_busy", `{"cmd":"prompt","session":"s","text":"x","if_busy":"later"}`, "bad_request", `if_busy is queue, steer, reject, interrupt or rollback, not "later"`},
		{"if_busy of the wrong type", `{"cmd":"prompt","session":"s","text":"x","if_busy":true}`, "bad_request", `field "if_busy": expected a string`},
		{"unknown abort at", `{"cmd":"abort","session":"s","at":"soon"}`, "bad_request", `at is now, after_response or after_tools, not "soon"`},
		{"negative timeout_ms", `{"cmd":"abort","session":"s","at":"after_tools","timeout_ms":-5}`, "bad_request", "timeout_ms must not be negative, not -5"},
		{"unknown queue_mode", `{"cmd":"create_session","model":"script:demo","queue_mode":"every"}`, "bad_request", `queue_mode is one_at_a_time or all, not "every"`},
		{"fork without an index", `{"cmd":"fork","session":"s"}`, "bad_request", `fork needs "index"`},
		{"fork beyond the history", `{"cmd":"fork","session":"s","index":1}`, "bad_request", "index 1 is out of range: the history has 0 messages"},
		{"fork with a negative index", `{"cmd":"fork","session":"s","index":-1}`, "bad_request", "index -1 is out of range: the history has 0 messages"},
		{"fork onto a taken id", `{"cmd":"fork","session":"s","index":0,"new_session":"s"}`, "bad_request", `session "s" exists`},
		{"create a sub-agent's id", `{"cmd":"create_session","session":"s/sub-1","model":"script:demo"}`, "bad_request",
			`session "s/sub-1" is not a valid id: an id is ` + tack.IDRule},
		{"create with a newline in the id", `{"cmd":"create_session","session":"a\nb","model":"script:demo"}`, "bad_request",
			`session "a\nb" is not a valid id: an id is ` + tack.IDRule},
		{"fork onto ..", `{"cmd":"fork","session":"s","index":0,"new_session":".."}`, "bad_request",
			`new_session ".." is not a valid id: an id is ` + tack.IDRule},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resps := serve(t, create, c.line, `{"cmd":"get_state","id":"after","session":"s"}`)
			if len(resps) != 3 {
				t.Fatalf("got %d responses, want 3: %v", len(resps), resps)
			}
			wantError(t, resps[1], c.code, c.message)
			if after := resps[2]; after["ok"] != true || after["id"] != "after" {
				t.Fatalf("the connection stopped serving: %v", after)
			}
		})
	}
}

// wantError fails unless resp is an error response with code and message.
func wantError(t *testing.T, resp map[string]any, code, message string) {
	t.Helper()
	e, _ := resp["error"].(map[string]any)
	if resp["ok"] != false || e["code"] != code || e["message"] != message {
		t.Fatalf("response %v, want error %s %q", resp, code, message)
	}
}

// TestHeaderKeys: cmd and id belong to the line, session too but for
// create_session, whose own field it is.
func TestHeaderKeys(t *testing.T) {
	resps := serve(t,
		`{"cmd":"create_session","id":1,"session":"a","model":"script:demo"}`,
		`{"cmd":"list_sessions","id":2,"session":"ignored"}`,
		`{"cmd":"close_session","id":3,"session":"a"}`)
	if len(resps) != 3 {
		t.Fatalf("got %d responses, want 3: %v", len(resps), resps)
	}
	if d, _ := resps[0]["data"].(map[string]any); resps[0]["ok"] != true || d["session"] != "a" {
		t.Fatalf("create_session: %v", resps[0])
	}
	for _, r := range resps[1:] {
		if r["ok"] != true {
			t.Fatalf("%v", r)
		}
	}
}

// TestLongLines: a line over the limit gets bad_request, its rest is
// skipped, and the next line is served; a line at the limit is served.
func TestLongLines(t *testing.T) {
	const limit = 100
	at := `{"cmd":"list_sessions","id":"` + strings.Repeat("a", limit-31) + `"}`
	if len(at) != limit {
		t.Fatalf("the line at the limit has %d bytes", len(at))
	}
	over := `{"cmd":"list_sessions","id":"` + strings.Repeat("b", limit-30) + `"}`
	huge := `{"cmd":"list_sessions","id":"` + strings.Repeat("c", 200<<10) + `"}`
	message := "line is longer than 100 bytes; it was skipped"
	for _, c := range []struct {
		name, in string
	}{
		{"at the limit", at + "\n"},
		{"at the limit with CRLF", at + "\r\n"},
		{"one byte over", over + "\n"},
		{"one byte over with CRLF", over + "\r\n"},
		{"many buffers over", huge + "\n"},
		{"over at the end of input", huge},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt, err := tack.New()
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			var out bytes.Buffer
			in := c.in + `{"cmd":"list_sessions","id":"next"}` + "\n"
			if c.name == "over at the end of input" {
				in = `{"cmd":"list_sessions","id":"next"}` + "\n" + c.in
			}
			if err := Serve(context.Background(), rt, strings.NewReader(in), &out, WithMaxLineBytes(limit)); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(lines) != 2 {
				t.Fatalf("got %d lines, want 2: %q", len(lines), out.String())
			}
			var resps []map[string]any
			for _, l := range lines {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatal(err)
				}
				resps = append(resps, m)
			}
			long, next := resps[0], resps[1]
			if c.name == "over at the end of input" {
				long, next = next, long
			}
			if next["id"] != "next" || next["ok"] != true {
				t.Fatalf("the next line was not served: %v", next)
			}
			if strings.HasPrefix(c.name, "at the limit") {
				if long["ok"] != true || long["id"] != at[29:len(at)-2] {
					t.Fatalf("the line at the limit was not served: %v", long)
				}
				return
			}
			wantError(t, long, "bad_request", message)
			if long["id"] != nil || long["cmd"] != "" {
				t.Fatalf("a skipped line has no id or cmd: %v", long)
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

// TestToolsCommands: attach_tools and detach_tools answer {}, and a
// name attached by the first is detached by the second.
func TestToolsCommands(t *testing.T) {
	resps := serve(t, create,
		`{"cmd":"attach_tools","id":"a","session":"s","names":["todo_write"]}`,
		`{"cmd":"detach_tools","id":"d","session":"s","names":["todo_write","shell"]}`,
		`{"cmd":"detach_tools","id":"again","session":"s","names":["todo_write"]}`)
	for i, id := range []string{"a", "d"} {
		if r := resps[i+1]; r["ok"] != true || r["id"] != id || fmt.Sprint(r["data"]) != "map[]" {
			t.Fatalf("response %v, want ok with {}", r)
		}
	}
	wantError(t, resps[3], "unknown_tool", `the session has no tool "todo_write"; nothing was changed`)
}

// TestDeleteSession: delete_session answers ok and the session is
// invalid_session after it; deleting it again is invalid_session too, and
// delete_session without a session is bad_request.
func TestDeleteSession(t *testing.T) {
	resps := serve(t,
		`{"cmd":"create_session","id":1,"session":"a","model":"script:demo"}`,
		`{"cmd":"delete_session","id":2,"session":"a"}`,
		`{"cmd":"get_state","id":3,"session":"a"}`,
		`{"cmd":"delete_session","id":4,"session":"a"}`,
		`{"cmd":"delete_session","id":5}`)
	var got []map[string]any
	for _, r := range resps {
		if r["type"] == "response" {
			got = append(got, r)
		}
	}
	if len(got) != 5 || got[0]["ok"] != true || got[1]["ok"] != true {
		t.Fatalf("responses %v", got)
	}
	wantError(t, got[2], "invalid_session", `no session "a"`)
	wantError(t, got[3], "invalid_session", `no session "a"`)
	wantError(t, got[4], "bad_request", `delete_session needs "session"`)
}
