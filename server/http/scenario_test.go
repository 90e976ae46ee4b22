package http

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/internal/eventually"
)

// Scripts of the scenarios' session "s", owned by alice.
const (
	idleSession = `{"session":"s","script":{"turns":[{"text":"hi"}]}}`
	heldSession = `{"session":"s","script":{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":1}}]},{"text":"done"}]},` +
		`"plugins":[{"name":"approval","config":{"tools":["sleep"]}}]}`
	busySession   = `{"session":"s","script":{"turns":[{"delay_ms":20000,"text":"slow"}]}}`
	refuseSession = `{"session":"s","script":{"turns":[{"delay_ms":20000,"text":"slow"}]},"plugins":[{"name":"refuse"}]}`
)

// scenario is one request against a fresh server where alice has
// session "s": what it must answer, and which events the session must
// emit after it.
type scenario struct {
	name   string
	setup  string // the create_session body of "s"; "" for idleSession
	busy   bool   // prompt "s" first and wait until it runs
	held   bool   // prompt "s" first and wait for its approval
	method string
	path   string
	token  string // aliceToken unless set; "-" for none
	body   string
	status int
	want   string   // the exact body, or "~text" for a body containing text
	events []string // event types that must follow, in order (a filter)
}

func TestScenarios(t *testing.T) {
	for _, sc := range []scenario{
		// create_session and list_sessions
		{name: "create", method: "POST", path: "/v1/sessions", body: `{"session":"t","model":"script:demo"}`, status: 201, want: `{"session":"t"}`},
		{name: "create with a generated id", method: "POST", path: "/v1/sessions", body: `{"script":{"turns":[{"text":"x"}]}}`, status: 201, want: `{"session":"s-1"}`},
		{name: "create with a taken id", method: "POST", path: "/v1/sessions", body: idleSession, status: 400, want: `~exists`},
		{name: "create another user's id", token: bobToken, method: "POST", path: "/v1/sessions", body: idleSession, status: 400, want: `~exists`},
		{name: "create with an unknown model", method: "POST", path: "/v1/sessions", body: `{"model":"gpt-nothing"}`, status: 422, want: `~unknown_model`},
		{name: "create with an unknown tool", method: "POST", path: "/v1/sessions", body: `{"model":"script:demo","tools":["teleport"]}`, status: 422, want: `~unknown_tool`},
		{name: "create with an unknown field", method: "POST", path: "/v1/sessions", body: `{"model":"script:demo","modle":"x"}`, status: 400,
			want: `{"error":{"code":"bad_request","message":"unknown field \"modle\" in create_session"}}`},
		{name: "create with a body that is not JSON", method: "POST", path: "/v1/sessions", body: `{"model":`, status: 400, want: `~"code":"bad_request"`},
		{name: "create with a wrong type", method: "POST", path: "/v1/sessions", body: `{"model":7}`, status: 400, want: `~model`},
		{name: "create with a parameter", method: "POST", path: "/v1/sessions?x=1", body: `{"model":"script:demo"}`, status: 400, want: `~no parameter \"x\"`},
		{name: "list", method: "GET", path: "/v1/sessions", status: 200,
			want: `~{"sessions":[{"session":"s","state":"idle","model":"script:inline","message_count":0,"loaded":true,"title":"","updated_at":"20`},
		{name: "list of another user", token: bobToken, method: "GET", path: "/v1/sessions", status: 200, want: `{"sessions":[],"next":""}`},
		{name: "list with a bad limit", method: "GET", path: "/v1/sessions?limit=ten", status: 400, want: `~limit`},
		{name: "list with a negative limit", method: "GET", path: "/v1/sessions?limit=-1", status: 400, want: `~limit`},
		{name: "list with an unknown parameter", method: "GET", path: "/v1/sessions?order=asc", status: 400, want: `~no parameter \"order\"`},

		// reads
		{name: "get_state", method: "GET", path: "/v1/sessions/s", status: 200, want: `~{"state":"idle","model":"script:inline","run_id":null,`},
		{name: "get_state of a pending approval", held: true, method: "GET", path: "/v1/sessions/s", status: 200,
			want: `~"pending_approvals":[{"approval_id":"ap-1","tool":"sleep","call_id":"c-1","args":{"ms":1},"hint":"sleep: {\"ms\":1}"}]`},
		{name: "get_messages", method: "GET", path: "/v1/sessions/s/messages", status: 200, want: `{"messages":[]}`},
		{name: "get_messages with all", method: "GET", path: "/v1/sessions/s/messages?all=true", status: 200, want: `{"messages":[]}`},
		{name: "get_messages with all not a boolean", method: "GET", path: "/v1/sessions/s/messages?all=yes", status: 400, want: `~all must be true or false, not \"yes\"`},
		{name: "get_messages with a parameter", method: "GET", path: "/v1/sessions/s/messages?since=3", status: 400, want: `~no parameter \"since\"`},

		// session commands
		{name: "prompt", method: "POST", path: "/v1/sessions/s/prompt", body: `{"text":"hello"}`, status: 200, want: `{"queued":false}`,
			events: []string{"prompt_received", "agent_start", "agent_end"}},
		{name: "prompt while busy", busy: true, method: "POST", path: "/v1/sessions/s/prompt", body: `{"text":"later"}`, status: 200,
			want: `{"queued":true}`, events: []string{"prompt_queued"}},
		{name: "prompt without text", method: "POST", path: "/v1/sessions/s/prompt", body: `{}`, status: 400,
			want: `{"error":{"code":"bad_request","message":"prompt needs \"text\""}}`},
		{name: "prompt with an unknown field", method: "POST", path: "/v1/sessions/s/prompt", body: `{"text":"x","if_bussy":"queue"}`, status: 400, want: `~if_bussy`},
		{name: "prompt with an empty body", method: "POST", path: "/v1/sessions/s/prompt", status: 400, want: `~needs \"text\"`},
		{name: "prompt while busy, if_busy reject", busy: true, method: "POST", path: "/v1/sessions/s/prompt", body: `{"text":"now","if_busy":"reject"}`,
			status: 409, want: `{"error":{"code":"busy","message":"the session is running with run r-1 in progress"}}`},
		{name: "prompt while busy, if_busy interrupt", busy: true, method: "POST", path: "/v1/sessions/s/prompt", body: `{"text":"now","if_busy":"interrupt"}`,
			status: 200, want: `{"queued":false}`, events: []string{"agent_abort", "agent_end", "prompt_received", "agent_start"}},
		{name: "prompt with an unknown if_busy", method: "POST", path: "/v1/sessions/s/prompt", body: `{"text":"x","if_busy":"later"}`, status: 400,
			want: `{"error":{"code":"bad_request","message":"if_busy is queue, steer, reject, interrupt or rollback, not \"later\""}}`},
		{name: "abort after_tools while busy", busy: true, method: "POST", path: "/v1/sessions/s/abort", body: `{"at":"after_tools","timeout_ms":1}`,
			status: 200, want: `{}`, events: []string{"agent_abort", "agent_end"}},
		{name: "abort with an unknown at", method: "POST", path: "/v1/sessions/s/abort", body: `{"at":"soon"}`, status: 400,
			want: `{"error":{"code":"bad_request","message":"at is now, after_response or after_tools, not \"soon\""}}`},
		{name: "fork", method: "POST", path: "/v1/sessions/s/fork", body: `{"index":0,"new_session":"f"}`, status: 201, want: `{"session":"f"}`},
		{name: "fork without an index", method: "POST", path: "/v1/sessions/s/fork", body: `{}`, status: 400,
			want: `{"error":{"code":"bad_request","message":"fork needs \"index\""}}`},
		{name: "fork beyond the history", method: "POST", path: "/v1/sessions/s/fork", body: `{"index":3}`, status: 400,
			want: `{"error":{"code":"bad_request","message":"index 3 is out of range: the history has 0 messages"}}`},
		{name: "fork of another user's session", token: bobToken, method: "POST", path: "/v1/sessions/s/fork", body: `{"index":0}`, status: 404, want: `~invalid_session`},
		{name: "create with an unknown queue_mode", method: "POST", path: "/v1/sessions", body: `{"model":"script:demo","queue_mode":"some"}`, status: 400,
			want: `{"error":{"code":"bad_request","message":"queue_mode is one_at_a_time or all, not \"some\""}}`},
		{name: "steer while busy", busy: true, method: "POST", path: "/v1/sessions/s/steer", body: `{"text":"faster"}`, status: 200,
			want: `{"ref":"st-1"}`, events: []string{"steering_received"}},
		{name: "steer with a full queue", setup: busySession, busy: true, method: "POST", path: "/v1/sessions/s/steer", body: `{"text":"x"}`, status: 429,
			want: `~queue_full`},
		{name: "steer refused by a plugin", setup: refuseSession, busy: true, method: "POST", path: "/v1/sessions/s/steer", body: `{"text":"x"}`,
			status: 403, want: `~"code":"rejected"`, events: []string{"steering_received"}},
		{name: "abort", busy: true, method: "POST", path: "/v1/sessions/s/abort", body: `{"kill_tools":"all","clear_queue":true}`, status: 200,
			want: `{}`, events: []string{"agent_abort", "agent_end"}},
		{name: "abort with a bad kill_tools", method: "POST", path: "/v1/sessions/s/abort", body: `{"kill_tools":"some"}`, status: 400, want: `~kill_tools`},
		{name: "approve", held: true, method: "POST", path: "/v1/sessions/s/approve", body: `{"approval_id":"ap-1"}`, status: 200, want: `{}`,
			events: []string{"approval_resolved", "agent_resumed", "agent_end"}},
		{name: "approve nothing pending", method: "POST", path: "/v1/sessions/s/approve", body: `{"approval_id":"ap-1"}`, status: 409, want: `~no_pending_approval`},
		{name: "reject", held: true, method: "POST", path: "/v1/sessions/s/reject", body: `{"approval_id":"ap-1","reason":"no"}`, status: 200, want: `{}`,
			events: []string{"approval_resolved"}},
		{name: "reject nothing pending", method: "POST", path: "/v1/sessions/s/reject", body: `{"approval_id":"ap-9"}`, status: 409, want: `~no_pending_approval`},
		{name: "respond nothing pending", method: "POST", path: "/v1/sessions/s/respond", body: `{"ref":"q-1","response":"yes"}`, status: 409,
			want: `~no_pending_question`},
		{name: "switch_model", method: "POST", path: "/v1/sessions/s/switch_model", body: `{"model":"script:demo"}`, status: 200, want: `{}`,
			events: []string{"model_switched"}},
		{name: "switch to an unknown model", method: "POST", path: "/v1/sessions/s/switch_model", body: `{"model":"gpt-nothing"}`, status: 422, want: `~unknown_model`},
		{name: "compact with nothing to compact", method: "POST", path: "/v1/sessions/s/compact", status: 200, want: `{}`,
			events: []string{"compact_start", "compact_end"}},
		{name: "attach_tools", method: "POST", path: "/v1/sessions/s/attach_tools", body: `{"names":["todo_write"]}`, status: 200, want: `{}`,
			events: []string{"tools_updated"}},
		{name: "detach_tools", method: "POST", path: "/v1/sessions/s/detach_tools", body: `{"names":["shell"]}`, status: 200, want: `{}`,
			events: []string{"tools_updated"}},
		{name: "attach an unknown tool", method: "POST", path: "/v1/sessions/s/attach_tools", body: `{"names":["teleport"]}`, status: 422,
			want: `{"error":{"code":"unknown_tool","message":"unknown tool \"teleport\"; nothing was changed"}}`},
		{name: "detach without names", method: "POST", path: "/v1/sessions/s/detach_tools", body: `{}`, status: 400,
			want: `{"error":{"code":"bad_request","message":"detach_tools needs \"names\""}}`},
		{name: "close", method: "POST", path: "/v1/sessions/s/close", status: 204, want: ``},
		{name: "delete", method: "DELETE", path: "/v1/sessions/s", status: 204, want: ``},
		{name: "body too large", method: "POST", path: "/v1/sessions/s/prompt", body: `{"text":"` + strings.Repeat("x", 2<<20) + `"}`, status: 413,
			want: `~"code":"bad_request"`},

		// sessions that are not the caller's, or not there
		{name: "no such session", method: "GET", path: "/v1/sessions/nope", status: 404,
			want: `{"error":{"code":"invalid_session","message":"no session \"nope\""}}`},
		{name: "another user's session", token: bobToken, method: "GET", path: "/v1/sessions/s", status: 404,
			want: `{"error":{"code":"invalid_session","message":"no session \"s\""}}`},
		{name: "another user's prompt", token: bobToken, method: "POST", path: "/v1/sessions/s/prompt", body: `{"text":"x"}`, status: 404, want: `~invalid_session`},
		{name: "another user's messages", token: bobToken, method: "GET", path: "/v1/sessions/s/messages", status: 404, want: `~invalid_session`},
		{name: "another user's close", token: bobToken, method: "POST", path: "/v1/sessions/s/close", status: 404, want: `~invalid_session`},
		{name: "another user's delete", token: bobToken, method: "DELETE", path: "/v1/sessions/s", status: 404, want: `~invalid_session`},
		{name: "another user's events", token: bobToken, method: "GET", path: "/v1/sessions/s/events", status: 404, want: `~invalid_session`},
		{name: "another user's compact", token: bobToken, method: "POST", path: "/v1/sessions/s/compact", status: 404, want: `~invalid_session`},

		// credentials, routes, methods
		{name: "no credential", token: "-", method: "GET", path: "/v1/sessions", status: 401, want: `~"code":"unauthorized"`},
		{name: "bad token", token: "tk_mallory", method: "GET", path: "/v1/sessions", status: 401, want: `~"code":"unauthorized"`},
		{name: "token in the query", token: "-", method: "GET", path: "/v1/sessions/s?access_token=" + aliceToken, status: 200, want: `~"state":"idle"`},
		{name: "health without a credential", token: "-", method: "GET", path: "/healthz", status: 200, want: `{"status":"ok"}`},
		{name: "unknown path", method: "GET", path: "/v1/nothing", status: 404, want: `{"error":{"code":"unknown_command","message":"no route GET /v1/nothing"}}`},
		{name: "unknown command", method: "POST", path: "/v1/sessions/s/dance", status: 404, want: `~unknown_command`},
		{name: "wrong method", method: "PUT", path: "/v1/sessions/s", status: 405, want: `~"code":"unknown_command"`},
		{name: "wrong method on a command", method: "GET", path: "/v1/sessions/s/prompt", status: 405, want: `~"code":"unknown_command"`},
		{name: "events with a bad since", method: "GET", path: "/v1/sessions/s/events?since=x", status: 400, want: `~since`},
		{name: "events with a bad type", method: "GET", path: "/v1/sessions/s/events?types=no_such_event", status: 400, want: `~bad_request`},
	} {
		t.Run(sc.name, func(t *testing.T) { sc.run(t) })
	}
}

// hold prompts alice's session "s", made with heldSession, and waits
// until its approval ap-1 is pending.
func (ts *testServer) hold() {
	ts.t.Helper()
	ts.must("POST", "/v1/sessions/s/prompt", aliceToken, `{"text":"go"}`, 200)
	eventually.Within(ts.t, 5*time.Second, func() error {
		if !strings.Contains(ts.must("GET", "/v1/sessions/s", aliceToken, "", 200), `"approval_id":"ap-1"`) {
			return errors.New("no approval pending")
		}
		return nil
	})
}

func (sc scenario) run(t *testing.T) {
	ts := start(t, nil, WithAuth(testAuth(t)))
	setup := sc.setup
	if setup == "" {
		setup = idleSession
		if sc.held {
			setup = heldSession
		} else if sc.busy {
			setup = busySession
		}
	}
	ts.must("POST", "/v1/sessions", aliceToken, setup, 201)
	if sc.busy {
		ts.must("POST", "/v1/sessions/s/prompt", aliceToken, `{"text":"go"}`, 200)
		ts.waitState("/v1/sessions/s", aliceToken, "running")
		if sc.setup == busySession { // fill the steering queue (limit 1)
			ts.must("POST", "/v1/sessions/s/steer", aliceToken, `{"text":"first"}`, 200)
		}
	}
	if sc.held {
		ts.hold()
	}
	var sub *tack.Subscription
	if len(sc.events) > 0 {
		s, err := ts.rt.Session("s")
		if err != nil {
			t.Fatal(err)
		}
		// Live events only, of the types the scenario names.
		sub, err = s.Subscribe(context.Background(), tack.SubscribeOptions{Since: math.MaxUint64, Types: sc.events})
		if err != nil {
			t.Fatal(err)
		}
	}
	token := sc.token
	switch token {
	case "":
		token = aliceToken
	case "-":
		token = ""
	}
	r := ts.do(sc.method, sc.path, token, sc.body)
	if r.status != sc.status {
		t.Fatalf("%s %s: status %d %s, want %d", sc.method, sc.path, r.status, r.body, sc.status)
	}
	if text, ok := strings.CutPrefix(sc.want, "~"); ok {
		if !strings.Contains(r.body, text) {
			t.Fatalf("body %s\nwant it to contain %s", r.body, text)
		}
	} else if r.body != sc.want {
		t.Fatalf("body %s\nwant        %s", r.body, sc.want)
	}
	if ct := r.header.Get("Content-Type"); sc.status != 204 && ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	if sub != nil {
		var got []string
		timeout := time.After(5 * time.Second)
		for len(got) < len(sc.events) {
			select {
			case ev := <-sub.C:
				got = append(got, events.Type(ev))
			case <-timeout:
				t.Fatalf("events %v, want %v", got, sc.events)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(sc.events) {
			t.Fatalf("events %v, want %v", got, sc.events)
		}
		_ = sub.Close()
	}
}

// TestMessagesAllOverHTTP: ?all=true returns what a compaction replaced,
// marked, before the summary and the working history.
func TestMessagesAllOverHTTP(t *testing.T) {
	ts := start(t, nil)
	ts.must("POST", "/v1/sessions", "", `{"session":"c","context":{"keep_recent":2},`+
		`"script":{"turns":[{"text":"a1"},{"text":"a2"},{"text":"p1 was answered."}]}}`, 201)
	for _, p := range []string{"p1", "p2"} {
		ts.must("POST", "/v1/sessions/c/prompt", "", `{"text":"`+p+`"}`, 200)
		ts.waitState("/v1/sessions/c", "", "idle")
		eventually.Within(t, 5*time.Second, func() error {
			if !strings.Contains(ts.must("GET", "/v1/sessions/c/messages", "", "", 200), `"a`+p[1:]+`"`) {
				return fmt.Errorf("the answer to %s was not committed", p)
			}
			return nil
		})
	}
	ts.must("POST", "/v1/sessions/c/compact", "", `{}`, 200)
	want := `{"messages":[{"role":"user","content":"p1","compacted":true},{"role":"assistant","content":"a1","compacted":true},` +
		`{"role":"user","content":"[Summary of the earlier conversation]\np1 was answered.","summary":true},` +
		`{"role":"user","content":"p2"},{"role":"assistant","content":"a2"}]}`
	eventually.Within(t, 5*time.Second, func() error {
		if got := ts.must("GET", "/v1/sessions/c/messages?all=true", "", "", 200); got != want {
			return fmt.Errorf("GET messages?all=true:\n got: %s\nwant: %s", got, want)
		}
		return nil
	})
	if got := ts.must("GET", "/v1/sessions/c/messages?all=false", "", "", 200); strings.Contains(got, "compacted") {
		t.Fatalf("all=false shows compacted messages: %s", got)
	}
}
