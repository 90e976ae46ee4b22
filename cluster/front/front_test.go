package front_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tack-run/tack/internal/tacknode"
	"github.com/tack-run/tack/store/postgres/pgtest"
)

// wait bounds the waits that involve no dead member; one that does
// gets three times as long (the lease of the dead member runs out first).
const wait = tacknode.Wait

// textRun is the events of one scripted run that answers with text.
var textRun = []string{"prompt_received", "agent_start", "message_committed", "state_changed", "agent_status", "turn_start",
	"request_start", "state_changed", "message_start", "message_delta", "response_complete", "message_committed",
	"token_usage", "turn_end", "state_changed", "agent_status", "agent_end"}

// sleeper's first turn runs a sleep long enough to be killed in.
const sleeper = `{"turns":[{"text":"Sleeping.","tool_calls":[{"name":"sleep","args":{"ms":30000}}]},{"text":"Next answer."}]}`

// TestServeCluster: two `tack node --cluster` members and two `tack
// serve --cluster` front ends on one PostgreSQL schema, which is also
// where the members register (the postgres provider). Through front end
// A a session is created, prompted, streamed, listed and read; the member
// that runs it is killed in the middle of a tool, and the next prompt
// through A restores it on the other member, while A's event stream tells
// the gap (events_lost) and goes on after a resume with Last-Event-ID.
// Front end B serves the same session; another user is told it does not
// exist, as is an unknown id.
func TestServeCluster(t *testing.T) {
	dsn := pgtest.DSN(t)
	cluster := []string{"--store", dsn, "--cluster", "tack-front", "--cluster-provider", "postgres", "--cluster-refresh", "250ms", "--cluster-ttl", "2s"}
	members := map[string]*tacknode.Node{}
	for i := range 2 {
		name := "m" + strconv.Itoa(i)
		members[name] = tacknode.Start(t, tackBin, append([]string{"--node", name, "--lease-ttl", "2s", "--passivate-after", "0"}, cluster...)...)
	}
	for _, m := range members {
		m.WaitLog(t, "cluster tack-front has 2 members")
	}
	authFile := filepath.Join(t.TempDir(), "auth.json")
	if err := os.WriteFile(authFile, []byte(`{"tokens":{"tk-alice":"alice","tk-bob":"bob"},"grants":{"alice":{"tools":["*"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a := &front{t: t, node: tacknode.Serve(t, tackBin, append([]string{"--auth", authFile}, cluster...)...), token: "tk-alice"}
	b := &front{t: t, node: tacknode.Serve(t, tackBin, append([]string{"--auth", authFile}, cluster...)...), token: "tk-alice"}
	a.node.WaitLog(t, "a front end of cluster tack-front")

	if got := a.do("POST", "/v1/sessions", `{"session":"s1","script":`+sleeper+`}`, http.StatusCreated); got != `{"session":"s1"}` {
		t.Fatalf("create: %s", got)
	}
	sse := a.events("/v1/sessions/s1/events", "")
	if got := sse.types(t, "session_created"); !slices.Equal(got, []string{"session_created"}) {
		t.Fatalf("first events %q", got)
	}
	if got := a.do("POST", "/v1/sessions/s1/prompt", `{"text":"first"}`, http.StatusOK); got != `{"queued":false}` {
		t.Fatalf("prompt: %s", got)
	}
	want := []string{"prompt_received", "agent_start", "message_committed", "state_changed", "agent_status", "turn_start",
		"request_start", "state_changed", "message_start", "message_delta", "response_complete", "message_committed",
		"token_usage", "tool_calls", "state_changed", "agent_status", "tool_execution_start"}
	if got := sse.types(t, "tool_execution_start"); !slices.Equal(got, want) {
		t.Fatalf("the run's events\n got %q\nwant %q", got, want)
	}
	last := sse.last

	// Listed and read through either front end; bob sees none of it.
	for _, f := range []*front{a, b} {
		var list struct {
			Sessions []struct {
				Session, State string
				MessageCount   int `json:"message_count"`
			}
		}
		f.decode(f.do("GET", "/v1/sessions", "", http.StatusOK), &list)
		if len(list.Sessions) != 1 || list.Sessions[0].Session != "s1" || list.Sessions[0].State != "executing_tools" || list.Sessions[0].MessageCount != 2 {
			t.Fatalf("list through %s: %+v", f.node.Addr, list)
		}
		if got := f.do("GET", "/v1/sessions/s1/messages", "", http.StatusOK); got != `{"messages":[{"role":"user","content":"first"},{"role":"assistant","content":"Sleeping.","tool_calls":[{"id":"c-1","name":"sleep","args":{"ms":30000}}]}]}` {
			t.Fatalf("messages through %s: %s", f.node.Addr, got)
		}
	}
	bob := &front{t: t, node: b.node, token: "tk-bob"}
	if got := bob.do("GET", "/v1/sessions/s1", "", http.StatusNotFound); got != `{"error":{"code":"invalid_session","message":"no session \"s1\""}}` {
		t.Fatalf("bob's get_state of alice's session: %s", got)
	}
	if got := bob.do("GET", "/v1/sessions", "", http.StatusOK); got != `{"sessions":[],"next":""}` {
		t.Fatalf("bob's list: %s", got)
	}
	if got := a.do("POST", "/v1/sessions/nope/prompt", `{"text":"x"}`, http.StatusNotFound); got != `{"error":{"code":"invalid_session","message":"no session \"nope\""}}` {
		t.Fatalf("prompt to an unknown session: %s", got)
	}

	// Kill the member the session runs on (the owner of its lease).
	host := owner(t, dsn, "s1")
	members[host].Kill()
	// A prompt that races the front end noticing the kill can be handed
	// to the dead member's closing connection and lost; the front end
	// cannot tell, and answers not_alive, "may or may not have been done".
	// Sent after the kill, it was not done: a client sends it again.
	status, body := a.try("POST", "/v1/sessions/s1/prompt", `{"text":"after"}`)
	if status == http.StatusConflict && strings.Contains(body, "may or may not have been done") {
		if h := a.do("GET", "/v1/sessions/s1/messages", "", http.StatusOK); strings.Contains(h, `"after"`) {
			t.Fatalf("a prompt sent to a killed member was done: %s", h)
		}
		status, body = a.try("POST", "/v1/sessions/s1/prompt", `{"text":"after"}`)
	}
	if status != http.StatusOK || body != `{"queued":false}` {
		t.Fatalf("prompt after the kill: %d %s", status, body)
	}
	// The open stream tells the gap and ends; the client resumes from
	// the last event it got.
	if got := sse.types(t, "events_lost"); !slices.Equal(got, []string{"events_lost"}) {
		t.Fatalf("the open stream after the kill: %q", got)
	}
	sse.ended(t)
	resumed := a.events("/v1/sessions/s1/events", strconv.FormatUint(last, 10))
	want = append([]string{"events_lost", "agent_recovered", "message_committed", "agent_end"}, textRun...)
	got := resumed.types(t, "agent_end", "agent_end")
	if !slices.Equal(got, want) {
		t.Fatalf("the resumed stream\n got %q\nwant %q", got, want)
	}
	lost := resumed.evs[0]
	var gap struct{ From, To uint64 }
	resumed.decode(t, lost.data, &gap)
	if gap.From != last+1 || gap.To != resumed.evs[1].seq-1 {
		t.Fatalf("events_lost %+v after seq %d, restored events from %d", gap, last, resumed.evs[1].seq)
	}
	if host == owner(t, dsn, "s1") {
		t.Fatalf("the session is still owned by the killed member %s", host)
	}

	// Front end B drives the same session.
	sseB := b.events("/v1/sessions/s1/events", strconv.FormatUint(resumed.last, 10))
	if got := b.do("POST", "/v1/sessions/s1/prompt", `{"text":"third"}`, http.StatusOK); got != `{"queued":false}` {
		t.Fatalf("prompt through B: %s", got)
	}
	if got := sseB.types(t, "agent_end"); !slices.Equal(got, textRun) {
		t.Fatalf("B's stream\n got %q\nwant %q", got, textRun)
	}
	var msgs struct {
		Messages []struct{ Role, Content string }
	}
	b.decode(b.do("GET", "/v1/sessions/s1/messages", "", http.StatusOK), &msgs)
	var hist []string
	for _, m := range msgs.Messages {
		hist = append(hist, m.Role+":"+m.Content)
	}
	if want := []string{"user:first", "assistant:Sleeping.", "tool:interrupted: process restarted", "user:after", "assistant:Next answer.",
		"user:third", "assistant:Next answer."}; !slices.Equal(hist, want) {
		t.Fatalf("history through B: %q, want %q", hist, want)
	}
}

// front is a `tack serve --cluster` process, called as one user.
type front struct {
	t     *testing.T
	node  *tacknode.Node
	token string
}

// do makes a request and wants status; it returns the body, trimmed.
func (f *front) do(method, path, body string, status int) string {
	f.t.Helper()
	got, b := f.try(method, path, body)
	if got != status {
		f.t.Fatalf("%s %s: %d %s, want %d", method, path, got, b, status)
	}
	return b
}

// try sends a request and returns the status and the body, trimmed.
func (f *front) try(method, path, body string) (int, string) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.t.Context(), 3*wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+f.node.Addr+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, strings.TrimSpace(string(b))
}

func (f *front) decode(body string, v any) {
	f.t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		f.t.Fatalf("%s: %v", body, err)
	}
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	seq  uint64
	typ  string
	data string
}

// stream is an open event stream.
type stream struct {
	c    chan sseEvent
	evs  []sseEvent // the events types returned last
	last uint64     // the last seq seen
}

// events opens an event stream at path, resuming after lastID when it is
// not empty; it is closed when the test ends.
func (f *front) events(path, lastID string) *stream {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+f.node.Addr+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		f.t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	s := &stream{c: make(chan sseEvent, 1024)}
	go func() {
		defer res.Body.Close()
		defer close(s.c)
		var ev sseEvent
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.typ != "" {
					s.c <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.seq, _ = strconv.ParseUint(line[4:], 10, 64)
			case strings.HasPrefix(line, "event: "):
				ev.typ = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	return s
}

// types reads events until it has seen those of names in turn (the
// last included), and returns the types of all it read.
func (s *stream) types(t *testing.T, names ...string) []string {
	t.Helper()
	s.evs = nil
	var out []string
	timeout := time.After(3 * wait)
	for seen := 0; seen < len(names); {
		select {
		case ev, ok := <-s.c:
			if !ok {
				t.Fatalf("the stream ended after %q", out)
			}
			s.evs = append(s.evs, ev)
			out = append(out, ev.typ)
			if ev.seq != 0 {
				s.last = ev.seq
			}
			if ev.typ == names[seen] {
				seen++
			}
		case <-timeout:
			t.Fatalf("no %s: got %q", names, out)
		}
	}
	return out
}

// ended wants the stream to end with no further event.
func (s *stream) ended(t *testing.T) {
	t.Helper()
	select {
	case ev, ok := <-s.c:
		if ok {
			t.Fatalf("the stream goes on with %s", ev.typ)
		}
	case <-time.After(wait):
		t.Fatal("the stream did not end")
	}
}

func (s *stream) decode(t *testing.T, data string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(data), v); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
}

// owner is the node whose lease session id is under.
func owner(t *testing.T, dsn, id string) string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var o string
	if err := conn.QueryRow(t.Context(), "SELECT owner FROM sessions WHERE id = $1", id).Scan(&o); err != nil {
		t.Fatal(err)
	}
	return o
}
