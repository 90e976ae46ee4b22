package http

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	nethttp "net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/store/storetest"
)

// runTypes are the event types of one prompt to twoTurns.
var runTypes = strings.Fields(`prompt_received agent_start message_committed state_changed agent_status turn_start
	request_start state_changed message_start message_delta response_complete message_committed token_usage tool_calls
	state_changed agent_status tool_execution_start tool_execution_end tool_execution_metrics message_committed turn_end
	state_changed agent_status turn_start request_start state_changed message_start message_delta response_complete
	message_committed token_usage turn_end state_changed agent_status agent_end`)

// events are the events of msgs (not the responses), checked to follow
// seq after one by one.
func wsEvents(t *testing.T, after uint64, msgs []wsMsg) (evs []wsMsg, last uint64) {
	t.Helper()
	for _, m := range msgs {
		if m.Type == "response" {
			continue
		}
		if m.Seq != after+1 {
			t.Fatalf("event %s after seq %d", m.raw, after)
		}
		after = m.Seq
		evs = append(evs, m)
	}
	return evs, after
}

// TestWSRunIsTheSSEStream: a socket carries a run's events exactly as
// the event stream (and tack rpc) writes them, in seq order, and the
// response to the prompt by its id.
func TestWSRunIsTheSSEStream(t *testing.T) {
	ts := start(t, nil)
	ts.must("POST", "/v1/sessions", "", twoTurns, 201)
	c := ts.ws("/v1/sessions/s/ws", "")
	if m := c.msg(); m.Type != "session_created" || m.Seq != 1 {
		t.Fatalf("first frame %s", m.raw)
	}
	c.send(`{"id":1,"cmd":"prompt","text":"one"}`)
	msgs := c.until(`"type":"agent_end"`)
	var responses []string
	for _, m := range msgs {
		if m.Type == "response" {
			responses = append(responses, m.raw)
		}
	}
	if want := `{"type":"response","id":1,"cmd":"prompt","ok":true,"data":{"queued":false}}`; len(responses) != 1 || responses[0] != want {
		t.Fatalf("responses %v, want %s", responses, want)
	}
	evs, _ := wsEvents(t, 1, msgs)
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if strings.Join(types, " ") != strings.Join(runTypes, " ") {
		t.Fatalf("events %v\nwant   %v", types, runTypes)
	}
	sse := ts.open("/v1/sessions/s/events?since=1", "", "")
	for _, e := range evs {
		if m := sse.event(); m.data != e.raw {
			t.Fatalf("socket %s\nstream %s", e.raw, m.data)
		}
	}
}

// TestWSCommands: a socket runs commands on its session by id, refuses
// frames that are not commands with a response and stays open, and
// closes when its session does.
func TestWSCommands(t *testing.T) {
	ts := start(t, nil, WithAuth(testAuth(t)))
	ts.must("POST", "/v1/sessions", aliceToken, busySession, 201)
	c := ts.ws("/v1/sessions/s/ws?access_token="+aliceToken, "")
	if m := c.msg(); m.Type != "session_created" {
		t.Fatalf("first frame %s", m.raw)
	}
	for _, x := range []struct{ send, want string }{
		{`{"id":"p","cmd":"prompt","text":"go"}`, `{"type":"response","id":"p","cmd":"prompt","ok":true,"data":{"queued":false}}`},
		{`{"id":2,"cmd":"steer","text":"faster"}`, `{"type":"response","id":2,"cmd":"steer","ok":true,"data":{"ref":"st-1"}}`},
		{`{"id":3,"cmd":"steer","session":"s","text":"more"}`,
			`{"type":"response","id":3,"cmd":"steer","ok":false,"error":{"code":"queue_full","message":"steering queue holds 1 messages"}}`},
		{`{"id":4,"cmd":"get_state","session":"t"}`, `{"type":"response","id":4,"cmd":"get_state","ok":false,"error":{"code":"bad_request",` +
			`"message":"this socket is session \"s\"'s: \"session\" must be left out or be \"s\", not \"t\""}}`},
		{`not json`, `{"type":"response","id":null,"cmd":"","ok":false,"error":{"code":"bad_request",`},
		{`{"id":5,"cmd":"dance"}`, `{"type":"response","id":5,"cmd":"dance","ok":false,"error":{"code":"unknown_command","message":"unknown command \"dance\""}}`},
		{`{"id":6,"cmd":"abort","kill_tool":"all"}`, `{"type":"response","id":6,"cmd":"abort","ok":false,"error":{"code":"bad_request","message":"unknown field \"kill_tool\" in abort"}}`},
		{`{"id":7}`, `{"type":"response","id":7,"cmd":"","ok":false,"error":{"code":"bad_request","message":"a command needs \"cmd\""}}`},
		{"binary", `{"type":"response","id":null,"cmd":"","ok":false,"error":{"code":"bad_request","message":"a binary frame is not a command: send commands as JSON in text frames"}}`},
		{`{"id":8,"cmd":"abort","kill_tools":"all","clear_queue":true}`, `{"type":"response","id":8,"cmd":"abort","ok":true,"data":{}}`},
	} {
		var got string
		if x.send == "binary" {
			c.sendType(websocket.MessageBinary, `{"id":9,"cmd":"get_state"}`)
			got = c.response("null")
		} else {
			c.send(x.send)
			var id struct{ ID json.RawMessage }
			if json.Unmarshal([]byte(x.send), &id) != nil || id.ID == nil {
				id.ID = json.RawMessage("null")
			}
			got = c.response(string(id.ID))
		}
		if got != x.want && !(strings.HasSuffix(x.want, ",") && strings.HasPrefix(got, x.want)) {
			t.Fatalf("%s\ngot  %s\nwant %s", x.send, got, x.want)
		}
	}
	if end := c.until(`"type":"agent_end"`); !strings.Contains(end[len(end)-1].raw, `"reason":"aborted"`) {
		t.Fatalf("the run ended with %s", end[len(end)-1].raw)
	}
	c.send(`{"id":10,"cmd":"get_state"}`)
	if got := c.response("10"); !strings.HasPrefix(got, `{"type":"response","id":10,"cmd":"get_state","ok":true,"data":{"state":"idle",`) {
		t.Fatalf("get_state: %s", got)
	}
	c.send(`{"id":11,"cmd":"close_session"}`)
	if got := c.response("11"); got != `{"type":"response","id":11,"cmd":"close_session","ok":true,"data":{}}` {
		t.Fatalf("close_session: %s", got)
	}
	if code, reason := c.ended(); code != websocket.StatusNormalClosure || reason != reasonSessionClosed {
		t.Fatalf("closed with %v %q", code, reason)
	}
}

// TestWSRefusedBeforeUpgrade: a socket on another user's session, with
// no credential or a bad since is answered as HTTP, not upgraded.
func TestWSRefusedBeforeUpgrade(t *testing.T) {
	ts := start(t, nil, WithAuth(testAuth(t)))
	ts.must("POST", "/v1/sessions", aliceToken, idleSession, 201)
	url := "ws" + strings.TrimPrefix(ts.url, "http") + "/v1/sessions/s/ws"
	for _, x := range []struct {
		path, token string
		status      int
		body        string
	}{
		{"", bobToken, 404, `{"error":{"code":"invalid_session","message":"no session \"s\""}}`},
		{"?access_token=" + bobToken, "", 404, `{"error":{"code":"invalid_session","message":"no session \"s\""}}`},
		{"", "", 401, `{"error":{"code":"unauthorized","message":"no credential: send Authorization: Bearer \u003ctoken\u003e"}}`},
		{"?since=x", aliceToken, 400, `{"error":{"code":"bad_request","message":"since (or Last-Event-ID) must be an event seq, not \"x\""}}`},
	} {
		opts := &websocket.DialOptions{}
		if x.token != "" {
			opts.HTTPHeader = nethttp.Header{"Authorization": {"Bearer " + x.token}}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, res, err := websocket.Dial(ctx, url+x.path, opts)
		cancel()
		if err == nil {
			_ = c.CloseNow()
			t.Fatalf("%s as %q: upgraded", x.path, x.token)
		}
		var body []byte
		if res != nil {
			body = make([]byte, 512)
			n, _ := res.Body.Read(body)
			body = body[:n]
		}
		if res == nil || res.StatusCode != x.status || strings.TrimSpace(string(body)) != x.body {
			t.Fatalf("%s as %q: %v %+v %s", x.path, x.token, err, res, body)
		}
	}
}

// TestWSSinceReplays: ?since= replays what the ring holds after it, then
// live events, with no gap and no duplicate.
func TestWSSinceReplays(t *testing.T) {
	ts := start(t, nil)
	ts.must("POST", "/v1/sessions", "", twoTurns, 201)
	ts.must("POST", "/v1/sessions/s/prompt", "", `{"text":"one"}`, 200)
	ts.waitState("/v1/sessions/s", "", "idle")
	c := ts.ws("/v1/sessions/s/ws?since=10", "")
	evs, last := wsEvents(t, 10, c.until(`"type":"agent_end"`))
	if len(evs) != 26 || last != 36 {
		t.Fatalf("replayed %d events up to %d, want 26 up to 36", len(evs), last)
	}
	c.send(`{"id":1,"cmd":"prompt","text":"two"}`) // live now
	evs, _ = wsEvents(t, last, c.until(`"type":"agent_end"`))
	if evs[0].Type != "prompt_received" || !strings.Contains(evs[0].raw, `"text":"two"`) {
		t.Fatalf("the first live event is %s", evs[0].raw)
	}
}

// TestWSSlowClientIsCutOff: a socket that falls further behind than its
// buffer gets events_lost and is closed with a reason; it reconnects
// with since.
func TestWSSlowClientIsCutOff(t *testing.T) {
	ts := start(t, nil, WithEventBuffer(4))
	ts.must("POST", "/v1/sessions", "", twoTurns, 201)
	ts.must("POST", "/v1/sessions/s/prompt", "", `{"text":"one"}`, 200)
	ts.waitState("/v1/sessions/s", "", "idle")
	// The replay of 35 events does not fit a buffer of 4.
	c := ts.ws("/v1/sessions/s/ws?since=1", "")
	_, last := wsEvents(t, 1, []wsMsg{c.msg(), c.msg(), c.msg(), c.msg()})
	ts.must("POST", "/v1/sessions/s/prompt", "", `{"text":"two"}`, 200) // a live event brings the notice
	lost := c.msg()
	var ev struct{ From, To uint64 }
	_ = json.Unmarshal([]byte(lost.raw), &ev)
	if lost.Type != "events_lost" || lost.Seq != 0 || ev.From != last+1 {
		t.Fatalf("after %d: %s", last, lost.raw)
	}
	if code, reason := c.ended(); code != websocket.StatusPolicyViolation || reason != reasonBehind(4) {
		t.Fatalf("closed with %v %q", code, reason)
	}
	ts.waitState("/v1/sessions/s", "", "idle")
	again := ts.ws("/v1/sessions/s/ws?since="+itoa(last), "")
	wsEvents(t, last, []wsMsg{again.msg(), again.msg(), again.msg(), again.msg()})
}

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }

// TestWSPingOutlivesAnIdleProxy: pings keep an idle socket open through
// a proxy that cuts connections idle for longer than 300 ms; without
// them the proxy cuts it.
func TestWSPingOutlivesAnIdleProxy(t *testing.T) {
	for _, x := range []struct {
		name  string
		every time.Duration
	}{{"pinged", 60 * time.Millisecond}, {"not pinged", time.Hour}} {
		t.Run(x.name, func(t *testing.T) {
			ts := start(t, nil, WithKeepAlive(x.every))
			ts.must("POST", "/v1/sessions", "", idleSession, 201)
			proxy := idleProxy(t, strings.TrimPrefix(ts.url, "http://"), 300*time.Millisecond)
			pings := make(chan struct{}, 100)
			c := ts.dialWS("ws://"+proxy+"/v1/sessions/s/ws", "", true, &websocket.DialOptions{
				OnPingReceived: func(context.Context, []byte) bool { pings <- struct{}{}; return true }})
			if m := c.msg(); m.Type != "session_created" {
				t.Fatalf("first frame %s", m.raw)
			}
			if x.every == time.Hour {
				if code, reason := c.ended(); code != -1 {
					t.Fatalf("the proxy did not cut the socket: %v %q", code, reason)
				}
				return
			}
			for range 10 { // 600 ms and more, twice the proxy's idle limit
				select {
				case <-pings:
				case <-c.done:
					t.Fatalf("the socket ended: %v", c.err)
				case <-time.After(5 * time.Second):
					t.Fatal("no ping")
				}
			}
			c.send(`{"id":1,"cmd":"get_state"}`)
			if got := c.response("1"); !strings.Contains(got, `"ok":true`) {
				t.Fatalf("get_state: %s", got)
			}
		})
	}
}

// TestWSPeerThatDoesNotPongIsDropped: a client that reads nothing does
// not answer pings, and the server drops it.
func TestWSPeerThatDoesNotPongIsDropped(t *testing.T) {
	ts := start(t, nil, WithKeepAlive(50*time.Millisecond))
	ts.must("POST", "/v1/sessions", "", idleSession, 201)
	c := ts.dialWS("ws"+strings.TrimPrefix(ts.url, "http")+"/v1/sessions/s/ws", "", false, nil)
	eventually.Within(t, 5*time.Second, func() error {
		if ts.srv.sockets.open() != 0 || !c.dropped() {
			return errors.New("the server kept the socket")
		}
		return nil
	})
}

// TestWSShutdown: a server shutting down closes its sockets with going
// away, and Serve waits for them.
func TestWSShutdown(t *testing.T) {
	ts := start(t, nil)
	ts.must("POST", "/v1/sessions", "", idleSession, 201)
	c := ts.ws("/v1/sessions/s/ws", "")
	if m := c.msg(); m.Type != "session_created" {
		t.Fatalf("first frame %s", m.raw)
	}
	done := make(chan struct{})
	go func() { ts.stop(); close(done) }()
	if code, reason := c.ended(); code != websocket.StatusGoingAway || reason != reasonShutdown {
		t.Fatalf("closed with %v %q", code, reason)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown did not finish")
	}
	if n := ts.srv.sockets.open(); n != 0 {
		t.Fatalf("%d sockets open after Serve", n)
	}
}

// TestWebSocketCountsEveryFrame: every frame a WebSocket carries counts
// toward requests_per_minute, one refused as not a command too (a frame
// that does not parse, a binary frame, one naming another session): bob,
// at 3 requests a minute, is rate_limited within his 60 bad frames, and
// his next command is refused too.
func TestWebSocketCountsEveryFrame(t *testing.T) {
	ts, _ := startGrants(t, grantsAuth(t, `{"bob": {"requests_per_minute": 3}}`), t.TempDir())
	ts.must("POST", "/v1/sessions", bobToken, `{"session":"b","model":"script:demo"}`, 201) // 1
	wc := ts.ws("/v1/sessions/b/ws", bobToken)                                              // 2
	for i := 0; i < 20; i++ {
		wc.send(`{"x":1}`)                                          // no cmd
		wc.sendType(websocket.MessageBinary, `{"cmd":"get_state"}`) // binary
		wc.send(`{"cmd":"get_state","session":"other"}`)            // another session
	}
	rateLimited := 0
	for i := 0; i < 60; i++ {
		m := wc.msg()
		for m.Type != "response" {
			m = wc.msg()
		}
		if strings.Contains(m.raw, `"rate_limited"`) {
			rateLimited++
		}
	}
	wc.send(`{"cmd":"get_state","id":"last"}`)
	got := wc.response(`"last"`)
	if rateLimited < 59 || !strings.Contains(got, `"rate_limited"`) {
		t.Fatalf("60 refused frames, %d rate_limited, at bob's 3 requests a minute; the next command: %.120s", rateLimited, got)
	}
}

// TestWebSocketReadAheadIsBounded: a client that does not read its
// socket blocks the command runner (the replay of a big session fills
// the connection) while it sends frames of the largest size. The server
// reads ahead at most the body limit in frames, not commandQueue (64) of
// them: 65 MiB held before, for one socket, until the write timeout.
func TestWebSocketReadAheadIsBounded(t *testing.T) {
	ts, _ := startGrants(t, grantsAuth(t, `{"bob": {"requests_per_minute": 100}}`), t.TempDir())
	ts.must("POST", "/v1/sessions", bobToken, `{"session":"b","script":{"turns":[{"text":"ok"}]}}`, 201)
	big := strings.Repeat("x", 900_000)
	for i := 0; i < 12; i++ {
		ts.must("POST", "/v1/sessions/b/prompt", bobToken, `{"text":"`+big+`"}`, 200)
		ts.waitState("/v1/sessions/b", bobToken, "idle")
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// Never read: the replay fills the connection, the runner blocks on
	// its first response. Writes go on until the server stops reading
	// (one that takes 2 s).
	wc := ts.dialWS("ws"+strings.TrimPrefix(ts.url, "http")+"/v1/sessions/b/ws?since=0", bobToken, false, nil)
	frame := []byte(`{"cmd":"get_state","pad":"` + strings.Repeat("a", DefaultMaxBodyBytes-64) + `"}`)
	sent := 0
	for ; sent < 66; sent++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := wc.c.Write(ctx, websocket.MessageText, frame)
		cancel()
		if err != nil {
			break
		}
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("frames written: %d; heap held after GC: %d MiB", sent, held>>20)
	if held > 16<<20 {
		t.Fatalf("one socket whose client does not read made the server hold %d MiB of unread frames (max body %d)", held>>20, DefaultMaxBodyBytes)
	}
}

// TestWSAbortOvertakesAnAnswer: a socket's command goes to the session
// once the one before it has reached it, not once it is answered: an
// abort sent after a prompt whose answer waits for the store's write
// reaches the session at once, and agent_abort comes while the write
// hangs; the responses keep the commands' order. Before, the socket ran
// one command at a time, and the abort waited for the write (its 10 s
// timeout here).
func TestWSAbortOvertakesAnAnswer(t *testing.T) {
	st := &storetest.Gated{Store: memory.New()}
	ts := start(t, st)
	ts.must("POST", "/v1/sessions", "", `{"session":"s","script":{"turns":[{"tool_calls":[{"name":"sleep","args":{"ms":60000}}]},{"text":"done"}]}}`, 201)
	c := ts.ws("/v1/sessions/s/ws", "")
	c.send(`{"id":1,"cmd":"prompt","text":"go"}`)
	msgs := c.until(`"type":"tool_execution_start"`)
	st.HoldWrites()
	defer st.ReleaseWrites() // also when the test fails while the write hangs
	c.send(`{"id":2,"cmd":"prompt","text":"and then this"}`)
	c.send(`{"id":3,"cmd":"abort"}`)
	msgs = append(msgs, c.until(`"type":"agent_abort"`)...) // within 5 s, while the write for 2 hangs
	st.ReleaseWrites()
	msgs = append(msgs, c.until(`"id":3`)...)
	var ids []string
	for _, m := range msgs {
		if m.Type == "response" {
			var r struct{ ID json.RawMessage }
			_ = json.Unmarshal([]byte(m.raw), &r)
			ids = append(ids, string(r.ID))
		}
	}
	if want := []string{"1", "2", "3"}; !slices.Equal(ids, want) {
		t.Fatalf("responses %q, want %q", ids, want)
	}
}

// TestWebSocketAnswersAreBounded: a socket that sends commands and reads
// nothing makes the server hold at most commandsInFlight answers, each
// as data, not a JSON copy. With 64 commands running at once, each
// answer built whole before its turn, 64 get_messages of a 3.6 MB
// history held 330 MB.
func TestWebSocketAnswersAreBounded(t *testing.T) {
	ts := start(t, nil, WithAuth(testAuth(t)))
	const prompts = 4
	turns := strings.TrimSuffix(strings.Repeat(`{"text":"ok"},`, prompts), ",")
	ts.must("POST", "/v1/sessions", aliceToken, `{"session":"big","script":{"turns":[`+turns+`]}}`, 201)
	text := strings.Repeat("x", 900<<10)
	for range prompts {
		ts.must("POST", "/v1/sessions/big/prompt", aliceToken, `{"text":"`+text+`"}`, 200)
		ts.waitState("/v1/sessions/big", aliceToken, "idle")
	}
	history := len(ts.must("GET", "/v1/sessions/big/messages", aliceToken, "", 200))
	runtime.GC()
	var before, now runtime.MemStats
	runtime.ReadMemStats(&before)
	wc := ts.dialWS("ws"+strings.TrimPrefix(ts.url, "http")+"/v1/sessions/big/ws", aliceToken, false, nil) // never reads
	for i := range 64 {
		wc.send(fmt.Sprintf(`{"cmd":"get_messages","id":%d}`, i))
	}
	var most uint64
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		runtime.GC()
		runtime.ReadMemStats(&now)
		most = max(most, now.HeapInuse)
	}
	if grew := int64(most) - int64(before.HeapInuse); grew > int64((commandsInFlight+2)*history)+16<<20 {
		t.Errorf("64 commands whose answers nobody reads (a history of %d KB) hold %d MB", history>>10, grew>>20)
	}
}
