package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// JSON types of protocol fields; "?" prefixes nullable ones.
const (
	str = "string"
	num = "number"
	boo = "bool"
	obj = "object"
	arr = "array"
)

// protocolEvents is the event table of docs/protocol.md: every field each event
// carries besides type, session, seq and ts, with its JSON type.
var protocolEvents = map[string]map[string]string{
	"session_created":           {"model": str},
	"state_changed":             {"from": str, "to": str},
	"agent_status":              {"status": str, "tool_name": "?" + str},
	"prompt_received":           {"text": str},
	"prompt_queued":             {"text": str, "position": num},
	"prompt_dropped":            {"text": str},
	"steering_dropped":          {"ref": str, "text": str},
	"agent_start":               {"run_id": str},
	"agent_end":                 {"run_id": str, "reason": str, "usage": obj},
	"agent_abort":               {"run_id": "?" + str, "reason": str},
	"turn_start":                {"run_id": str, "turn": num},
	"turn_end":                  {"run_id": str, "turn": num},
	"request_start":             {"turn": num, "model": str, "message_count": num},
	"message_start":             {"role": str},
	"message_delta":             {"delta": str},
	"thinking_delta":            {"delta": str},
	"thinking_start":            {},
	"response_complete":         {"message": obj, "stop_reason": str, "usage": obj},
	"message_committed":         {"index": num, "message": obj},
	"token_usage":               {"context_used": num, "context_window": "?" + num, "context_percent": "?" + num, "session_total_tokens": num, "model": str, "cost_usd": num},
	"stream_error":              {"error": str},
	"tool_calls":                {"count": num},
	"tool_execution_start":      {"name": str, "call_id": str, "args": obj},
	"tool_execution_update":     {"name": str, "call_id": str, "partial": str},
	"tool_execution_end":        {"name": str, "call_id": str, "ok": boo, "result": str},
	"tool_execution_metrics":    {"name": str, "call_id": str, "started_at_ms": num, "ended_at_ms": num, "duration_ms": num},
	"tool_killed":               {"name": str, "call_id": str, "reason": str},
	"tool_skipped_for_steering": {"name": str, "call_id": str},
	"tool_call_unknown":         {"name": str, "call_id": str},
	"steering_received":         {"ref": str, "text": str, "status": str},
	"steering_applied":          {"refs": arr, "count": num},
	"model_switched":            {"from": str, "to": str},
	"error":                     {"code": str, "message": str},
	"events_lost":               {"from": num, "to": num},
}

var tsPattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

// fullScript exercises thinking, streaming, valid, unknown and invalid tool
// calls, a long tool for steering, an answer to abort, and a failure.
const fullScript = `{"context_window":8000,"turns":[
 {"thinking":"plan","text":"Let me look.","chunk_size":5,
  "tool_calls":[{"name":"echo","args":{"text":"hi"}},{"name":"nope","args":{}},{"name":"sleep","args":{"ms":"x"}},{"name":"shell","args":{"command":"echo out"}}]},
 {"text":"Waiting.","tool_calls":[{"name":"sleep","args":{"ms":20000}}]},
 {"text":"Steered."},
 {"text":"Queued answer."},
 {"text":"a long answer that will be cut","chunk_size":3,"chunk_delay_ms":200},
 {"text":"part","error":{"status":500,"message":"boom"}}
]}`

// rpcProcess is a running `tack rpc`.
type rpcProcess struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan map[string]any
	raw   []string
}

func startRPC(t *testing.T, bin string) *rpcProcess {
	t.Helper()
	return startCmd(t, exec.Command(bin, "rpc"))
}

// startCmd starts a tack command and reads its output lines: JSON objects
// as maps, other lines as {"type":"<text>","line":...}.
func startCmd(t *testing.T, cmd *exec.Cmd) *rpcProcess {
	t.Helper()
	p := &rpcProcess{t: t, cmd: cmd, lines: make(chan map[string]any, 4096)}
	var err error
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"type": "<text>", "line": sc.Text()}
			}
			m["<raw>"] = sc.Text()
			p.lines <- m
		}
	}()
	t.Cleanup(func() {
		p.in.Close()
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			t.Error("tack rpc did not exit after stdin closed")
		}
	})
	return p
}

func (p *rpcProcess) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// until reads lines until one satisfies pred, and returns every line read.
func (p *rpcProcess) until(pred func(map[string]any) bool) []map[string]any {
	p.t.Helper()
	var got []map[string]any
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("tack rpc closed its output; last lines: %v", tail(got))
			}
			got = append(got, m)
			if pred(m) {
				return got
			}
		case <-timeout:
			p.t.Fatalf("timed out; last lines: %v", tail(got))
		}
	}
}

// rest reads every line until tack rpc closes its output.
func (p *rpcProcess) rest() []map[string]any {
	p.t.Helper()
	var got []map[string]any
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				return got
			}
			got = append(got, m)
		case <-timeout:
			p.t.Fatalf("tack rpc did not finish; last lines: %v", tail(got))
		}
	}
}

func isType(typ string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ }
}

func isResponse(id string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == "response" && m["id"] == id }
}

func tail(ms []map[string]any) []string {
	var out []string
	for _, m := range ms[max(0, len(ms)-5):] {
		out = append(out, fmt.Sprint(m["<raw>"]))
	}
	return out
}

func buildTack(t *testing.T) string {
	t.Helper()
	bin, err := builtTack()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// binDir holds the tack binary the tests build; TestMain makes it and
// removes it once every test has run.
var binDir string

// builtTack builds the tack binary the first time a test asks for it;
// every later test runs the same file. Linking it takes seconds, and
// two dozen tests run it.
var builtTack = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "tack")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// TestRPCFullRunMatchesProtocol drives a whole session through `tack rpc`
// and checks every output line against docs/protocol.md.
func TestRPCFullRunMatchesProtocol(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	p := startRPC(t, buildTack(t))
	var lines []map[string]any
	collect := func(ls []map[string]any) { lines = append(lines, ls...) }

	p.send(`{"cmd":"create_session","id":"c","session":"s1","script":` + strings.ReplaceAll(fullScript, "\n", "") + `}`)
	collect(p.until(isResponse("c")))
	p.send(`{"cmd":"prompt","id":"p1","session":"s1","text":"look around"}`)
	collect(p.until(func(m map[string]any) bool {
		return m["type"] == "tool_execution_start" && m["name"] == "sleep" && fmt.Sprint(m["args"]) == "map[ms:20000]"
	}))
	p.send(`{"cmd":"prompt","id":"p2","session":"s1","text":"and then this"}`)
	p.send(`{"cmd":"steer","id":"st","session":"s1","text":"stop waiting"}`)
	collect(p.until(isType("agent_end")))
	// The queued prompt was consumed after "Steered.".
	p.send(`{"cmd":"get_state","id":"gs","session":"s1"}`)
	collect(p.until(isResponse("gs")))
	p.send(`{"cmd":"prompt","id":"p3","session":"s1","text":"tell me more"}`)
	collect(p.until(isType("message_delta")))
	p.send(`{"cmd":"abort","id":"ab","session":"s1"}`)
	collect(p.until(isType("agent_end")))
	p.send(`{"cmd":"prompt","id":"p4","session":"s1","text":"fail now"}`)
	collect(p.until(isType("agent_end")))
	p.send(`{"cmd":"abort","id":"ab2","session":"s1","clear_queue":true}`)
	p.send(`{"cmd":"switch_model","id":"sw","session":"s1","model":"script:demo"}`)
	p.send(`{"cmd":"get_messages","id":"gm","session":"s1"}`)
	collect(p.until(isResponse("gm")))
	p.send(`{"cmd":"subscribe","id":"sub","session":"s1","since":3,"types":["agent_*"]}`)
	p.send(`{"cmd":"list_sessions","id":"ls"}`)
	p.send(`{"cmd":"close_session","id":"cl","session":"s1"}`)
	p.in.Close()
	collect(p.rest())

	seen := map[string]bool{}
	var seq float64
	responses := map[string]map[string]any{}
	for _, m := range lines {
		typ, _ := m["type"].(string)
		raw := fmt.Sprint(m["<raw>"])
		delete(m, "<raw>")
		if typ == "response" {
			checkResponse(t, m, raw)
			responses[fmt.Sprint(m["id"])] = m
			continue
		}
		seen[typ] = true
		fields, known := protocolEvents[typ]
		if !known {
			t.Errorf("event type %q is not in docs/protocol.md: %s", typ, raw)
			continue
		}
		if m["session"] != "s1" || !tsPattern.MatchString(fmt.Sprint(m["ts"])) {
			t.Errorf("bad envelope: %s", raw)
		}
		if s, _ := m["seq"].(float64); s != seq+1 {
			t.Errorf("seq %v after %v: %s", m["seq"], seq, raw)
		} else {
			seq = s
		}
		want := map[string]string{"type": str, "session": str, "seq": num, "ts": str}
		for k, v := range fields {
			want[k] = v
		}
		checkFields(t, m, want, raw)
	}
	for _, typ := range []string{"session_created", "state_changed", "agent_status", "prompt_received", "prompt_queued",
		"agent_start", "agent_end", "agent_abort", "turn_start", "turn_end", "request_start", "message_start",
		"message_delta", "thinking_start", "thinking_delta", "response_complete", "message_committed", "token_usage",
		"stream_error", "tool_calls", "tool_execution_start", "tool_execution_update", "tool_execution_end",
		"tool_execution_metrics", "tool_skipped_for_steering", "tool_call_unknown", "steering_received",
		"steering_applied", "model_switched"} {
		if !seen[typ] {
			t.Errorf("the run never produced %s", typ)
		}
	}
	if got := dig(responses["p2"], "data", "queued"); got != true {
		t.Errorf("prompt while busy: queued = %v", got)
	}
	if got := dig(responses["st"], "data", "ref"); got != "st-1" {
		t.Errorf("steer ref = %v", got)
	}
	if got := dig(responses["gs"], "data", "state"); got != "idle" {
		t.Errorf("get_state.state = %v", got)
	}
	msgs, _ := dig(responses["gm"], "data", "messages").([]any)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, fmt.Sprint(m.(map[string]any)["role"]))
	}
	if want := "user assistant tool tool tool tool assistant tool user assistant user assistant user assistant user assistant"; strings.Join(roles, " ") != want {
		t.Errorf("history roles:\n got %s\nwant %s", strings.Join(roles, " "), want)
	}
	evs, _ := dig(responses["sub"], "data", "events").([]any)
	for _, e := range evs {
		e := e.(map[string]any)
		if !strings.HasPrefix(fmt.Sprint(e["type"]), "agent_") || e["seq"].(float64) <= 3 {
			t.Errorf("subscribe replay returned %v", e)
		}
	}
	if len(evs) == 0 {
		t.Error("subscribe replay is empty")
	}
}

// checkResponse checks a response line's shape.
func checkResponse(t *testing.T, m map[string]any, raw string) {
	t.Helper()
	want := map[string]string{"type": str, "id": "?" + str, "cmd": str, "ok": boo}
	if m["ok"] == true {
		want["data"] = obj
	} else {
		want["error"] = obj
		checkFields(t, m["error"].(map[string]any), map[string]string{"code": str, "message": str}, raw)
	}
	checkFields(t, m, want, raw)
}

// checkFields asserts m has exactly the fields of want, with their types.
func checkFields(t *testing.T, m map[string]any, want map[string]string, raw string) {
	t.Helper()
	var got, exp []string
	for k := range m {
		got = append(got, k)
	}
	for k := range want {
		exp = append(exp, k)
	}
	sort.Strings(got)
	sort.Strings(exp)
	if !slices.Equal(got, exp) {
		t.Errorf("fields %v, want %v: %s", got, exp, raw)
		return
	}
	for k, typ := range want {
		nullable := strings.HasPrefix(typ, "?")
		typ = strings.TrimPrefix(typ, "?")
		if m[k] == nil {
			if !nullable {
				t.Errorf("%s is null: %s", k, raw)
			}
			continue
		}
		if jsonType(m[k]) != typ {
			t.Errorf("%s is a %s, want %s: %s", k, jsonType(m[k]), typ, raw)
		}
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return str
	case float64:
		return num
	case bool:
		return boo
	case map[string]any:
		return obj
	case []any:
		return arr
	}
	return "null"
}

func dig(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}
