package http

import (
	"encoding/json"
	"errors"
	"io"
	nethttp "net/http"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events/eventjson"
	"github.com/tack-run/tack/store/sqlite"
)

const twoTurns = `{"session":"s","script":{"turns":[{"text":"Let me look.","tool_calls":[{"name":"sleep","args":{"ms":1}}]},{"text":"Done."}]}}`

// ids returns the seqs of msgs, checking each is the last plus one.
func contiguous(t *testing.T, after uint64, msgs []sseMsg) uint64 {
	t.Helper()
	for _, m := range msgs {
		n, err := strconv.ParseUint(m.id, 10, 64)
		if err != nil || n != after+1 {
			t.Fatalf("event %+v after seq %d: want seq %d", m, after, after+1)
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(m.data), &ev); err != nil || ev["type"] != m.event || ev["seq"] != float64(n) {
			t.Fatalf("data %s does not match id %s event %s", m.data, m.id, m.event)
		}
		after = n
	}
	return after
}

// TestEventsReplayLiveAndResume: a stream replays what the session did,
// follows it live, and a client that drops the connection resumes with
// Last-Event-ID without duplicates or gaps while the run went on.
func TestEventsReplayLiveAndResume(t *testing.T) {
	ts := start(t, nil)
	ts.must("POST", "/v1/sessions", "", twoTurns, 201)
	first := ts.open("/v1/sessions/s/events", "", "")
	if m := first.event(); m.id != "1" || m.event != "session_created" {
		t.Fatalf("first event %+v", m)
	}
	ts.must("POST", "/v1/sessions/s/prompt", "", `{"text":"one"}`, 200)
	last := contiguous(t, 1, first.until("agent_end"))
	first.close() // the client goes; the session does not care
	ts.must("POST", "/v1/sessions/s/prompt", "", `{"text":"two"}`, 200)
	ts.waitState("/v1/sessions/s", "", "idle")
	again := ts.open("/v1/sessions/s/events?types=", "", strconv.FormatUint(last, 10))
	end := contiguous(t, last, again.until("agent_end"))
	var st map[string]any
	_ = json.Unmarshal([]byte(ts.must("GET", "/v1/sessions/s", "", "", 200)), &st)
	if st["message_count"] != float64(6) || end <= last+5 {
		t.Fatalf("message_count %v, resumed from %d to %d", st["message_count"], last, end)
	}
	// since in the query works like the header, and types filter.
	filtered := ts.open("/v1/sessions/s/events?since=0&types=agent_start&types=agent_end", "", "")
	var got []string
	for _, m := range []sseMsg{filtered.event(), filtered.event(), filtered.event(), filtered.event()} {
		got = append(got, m.event)
	}
	if want := "[agent_start agent_end agent_start agent_end]"; "["+join(got)+"]" != want {
		t.Fatalf("filtered %v, want %s", got, want)
	}
	// The stream ends when the session is closed.
	ts.must("POST", "/v1/sessions/s/close", "", "", 204)
	for {
		if _, err := filtered.next(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("stream ended with %v", err)
			}
			break
		}
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// TestEventsLostFromTheRing: a resume from before what the ring holds
// starts with events_lost (without an id), then the rest.
func TestEventsLostFromTheRing(t *testing.T) {
	ts := startWith(t, nil, []tack.Option{tack.WithRingSize(8)})
	ts.must("POST", "/v1/sessions", "", twoTurns, 201)
	ts.must("POST", "/v1/sessions/s/prompt", "", `{"text":"one"}`, 200)
	ts.waitState("/v1/sessions/s", "", "idle")
	s := ts.open("/v1/sessions/s/events", "", "1")
	lost := s.event()
	var ev map[string]any
	_ = json.Unmarshal([]byte(lost.data), &ev)
	if lost.event != "events_lost" || lost.id != "" || ev["from"] != float64(2) || ev["seq"] != float64(0) {
		t.Fatalf("first message %+v", lost)
	}
	from := uint64(ev["to"].(float64))
	msgs := s.until("agent_end")
	if len(msgs) != 8 {
		t.Fatalf("%d events after events_lost, want the 8 the ring holds", len(msgs))
	}
	contiguous(t, from, msgs)
}

// TestSlowStreamIsCutOff: a stream that falls further behind than its
// buffer ends after events_lost; the client resumes from its last id.
func TestSlowStreamIsCutOff(t *testing.T) {
	ts := start(t, nil, WithEventBuffer(4))
	ts.must("POST", "/v1/sessions", "", twoTurns, 201)
	ts.must("POST", "/v1/sessions/s/prompt", "", `{"text":"one"}`, 200)
	ts.waitState("/v1/sessions/s", "", "idle")
	// The replay of ~30 events does not fit a buffer of 4.
	s := ts.open("/v1/sessions/s/events", "", "1")
	got := []sseMsg{s.event(), s.event(), s.event(), s.event()}
	last := contiguous(t, 1, got)
	ts.must("POST", "/v1/sessions/s/prompt", "", `{"text":"two"}`, 200) // a live event brings the notice
	lost := s.event()
	var ev map[string]any
	_ = json.Unmarshal([]byte(lost.data), &ev)
	if lost.event != "events_lost" || lost.id != "" || ev["from"] != float64(last+1) {
		t.Fatalf("after %d: %+v", last, lost)
	}
	if m, err := s.next(); !errors.Is(err, io.EOF) {
		t.Fatalf("the stream went on: %+v %v", m, err)
	}
	ts.waitState("/v1/sessions/s", "", "idle")
	s2 := ts.open("/v1/sessions/s/events", "", strconv.FormatUint(last, 10))
	contiguous(t, last, []sseMsg{s2.event(), s2.event(), s2.event(), s2.event()})
}

// TestKeepaliveAndShutdown: an idle stream gets keepalive comments, and
// a server shutting down ends it with a comment.
func TestKeepaliveAndShutdown(t *testing.T) {
	ts := start(t, nil, WithKeepAlive(10*time.Millisecond))
	ts.must("POST", "/v1/sessions", "", twoTurns, 201)
	s := ts.open("/v1/sessions/s/events", "", "")
	if m := s.event(); m.event != "session_created" {
		t.Fatalf("first %+v", m)
	}
	for i := 0; i < 2; i++ {
		if m, err := s.next(); err != nil || m.comment != "keepalive" {
			t.Fatalf("want a keepalive, got %+v %v", m, err)
		}
	}
	done := make(chan struct{})
	go func() { ts.stop(); close(done) }()
	for {
		m, err := s.next()
		if err != nil {
			t.Fatalf("stream ended with %v before the shutdown comment", err)
		}
		if m.comment == "server shutting down" {
			break
		}
	}
	if _, err := s.next(); !errors.Is(err, io.EOF) {
		t.Fatalf("stream after shutdown: %v", err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not finish")
	}
}

// TestPanicIsInternal: a handler that panics answers 500 internal and the
// server keeps serving.
func TestPanicIsInternal(t *testing.T) {
	ts := start(t, nil)
	ts.srv.mux.HandleFunc("GET /v1/panic", func(nethttp.ResponseWriter, *nethttp.Request) { panic("boom") })
	r := ts.do("GET", "/v1/panic", "", "")
	if r.status != 500 || r.body != `{"error":{"code":"internal","message":"the server failed to answer this request"}}` {
		t.Fatalf("%d %s", r.status, r.body)
	}
	ts.must("GET", "/healthz", "", "", 200)
}

// TestJWTUsers: a JWT's sub is its user; sessions stay apart from the
// static tokens' users; a token that is not valid is 401.
func TestJWTUsers(t *testing.T) {
	ts := start(t, nil, WithAuth(testAuth(t)))
	sign := func(claims jwt.MapClaims, key []byte) string {
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	claims := func(over map[string]any) jwt.MapClaims {
		c := jwt.MapClaims{"sub": "carol", "iss": "https://id.example", "aud": []string{"tack"}, "exp": time.Now().Add(time.Hour).Unix()}
		for k, v := range over {
			c[k] = v
		}
		return c
	}
	carol := sign(claims(nil), []byte(jwtSecret))
	ts.must("POST", "/v1/sessions", carol, `{"session":"c","model":"script:demo"}`, 201)
	ts.must("GET", "/v1/sessions/c", carol, "", 200)
	ts.must("GET", "/v1/sessions/c", aliceToken, "", 404)
	if body := ts.must("GET", "/v1/sessions", aliceToken, "", 200); body != `{"sessions":[],"next":""}` {
		t.Fatalf("alice lists %s", body)
	}
	for name, tok := range map[string]string{
		"expired":      sign(claims(map[string]any{"exp": time.Now().Add(-2 * time.Minute).Unix()}), []byte(jwtSecret)),
		"wrong iss":    sign(claims(map[string]any{"iss": "https://evil.example"}), []byte(jwtSecret)),
		"wrong aud":    sign(claims(map[string]any{"aud": "other"}), []byte(jwtSecret)),
		"wrong secret": sign(claims(nil), []byte("guess")),
		"alg none":     mustNone(t, claims(nil)),
	} {
		if r := ts.do("GET", "/v1/sessions/c", tok, ""); r.status != 401 {
			t.Errorf("%s: %d %s, want 401", name, r.status, r.body)
		}
	}
}

func mustNone(t *testing.T, c jwt.MapClaims) string {
	s, err := jwt.NewWithClaims(jwt.SigningMethodNone, c).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestListShowsTitles: without a store, GET /v1/sessions shows each
// session's title — the first line of its first prompt — and the time of
// its last change by the runtime's clock; get_state shows the title too.
func TestListShowsTitles(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 24, 10, 0, 0, 123000000, time.UTC)
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	ts := startWith(t, nil, []tack.Option{tack.WithClock(clock)})
	defer ts.stop()
	ts.must("POST", "/v1/sessions", "", twoTurns, 201)
	if body := ts.must("GET", "/v1/sessions", "", "", 200); body != `{"sessions":[{"session":"s","state":"idle","model":"script:inline",`+
		`"message_count":0,"loaded":true,"title":"","updated_at":"2026-11-24T10:00:00.123000Z"}],"next":""}` {
		t.Fatalf("before the prompt: %s", body)
	}
	mu.Lock()
	now = now.Add(2 * time.Second)
	mu.Unlock()
	evs := ts.open("/v1/sessions/s/events", "", "")
	ts.must("POST", "/v1/sessions/s/prompt", "", `{"text":"Check the \"sleep\" tool\nthen report"}`, 200)
	evs.until("agent_end")
	evs.close()
	want := `{"sessions":[{"session":"s","state":"idle","model":"script:inline","message_count":4,"loaded":true,` +
		`"title":"Check the \"sleep\" tool","updated_at":"2026-11-24T10:00:02.123000Z"}],"next":""}`
	if body := ts.must("GET", "/v1/sessions", "", "", 200); body != want {
		t.Fatalf("after the prompt: %s\nwant %s", body, want)
	}
	var st map[string]any
	if err := json.Unmarshal([]byte(ts.must("GET", "/v1/sessions/s", "", "", 200)), &st); err != nil || st["title"] != `Check the "sleep" tool` {
		t.Fatalf("get_state title %v, %v", st["title"], err)
	}
}

// TestOwnershipSurvivesRestart: on the same SQLite file, a new server
// knows whose sessions are whose.
func TestOwnershipSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tack.db")
	st := openSQLite(t, path)
	ts := start(t, st, WithAuth(testAuth(t)))
	ts.must("POST", "/v1/sessions", aliceToken, twoTurns, 201)
	// Events tell of what is durable: agent_end comes after the run's last
	// message is stored (get_state may show it a moment earlier).
	evs := ts.open("/v1/sessions/s/events", aliceToken, "")
	ts.must("POST", "/v1/sessions/s/prompt", aliceToken, `{"text":"one"}`, 200)
	evs.until("agent_end")
	evs.close()
	ts.stop()
	st.Close()

	st = openSQLite(t, path)
	defer st.Close()
	ts = start(t, st, WithAuth(testAuth(t)))
	r := ts.do("GET", "/v1/sessions/s", bobToken, "")
	if r.status != 404 || r.body != `{"error":{"code":"invalid_session","message":"no session \"s\""}}` {
		t.Fatalf("bob: %d %s", r.status, r.body)
	}
	if ts.rt.Loaded("s") {
		t.Fatal("bob's request restored alice's session")
	}
	ts.must("POST", "/v1/sessions/s/prompt", bobToken, `{"text":"x"}`, 404)
	if body := ts.must("GET", "/v1/sessions", bobToken, "", 200); body != `{"sessions":[],"next":""}` {
		t.Fatalf("bob lists %s", body)
	}
	// The title and the time of the last write come from the file.
	snap, err := st.Get(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sessions":[{"session":"s","state":"idle","model":"script:inline","message_count":4,"loaded":false,` +
		`"title":"one","updated_at":"` + eventjson.Timestamp(snap.UpdatedAt) + `"}],"next":""}`
	if body := ts.must("GET", "/v1/sessions", aliceToken, "", 200); body != want {
		t.Fatalf("alice lists %s\nwant       %s", body, want)
	}
	ts.must("POST", "/v1/sessions/s/prompt", aliceToken, `{"text":"two"}`, 200)
	st2 := ts.waitState("/v1/sessions/s", aliceToken, "idle")
	// The script goes on where it was: its last turn, a plain answer.
	if st2["message_count"] != float64(6) {
		t.Fatalf("after the restart: %v", st2)
	}
	ts.stop()
}

// TestResumeAcrossARestart: a client that reconnects with Last-Event-ID
// to a new server on the same SQLite file is told the gap the restart
// left (events_lost), then gets every new event, numbered past all it
// had seen.
func TestResumeAcrossARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tack.db")
	st := openSQLite(t, path)
	ts := start(t, st)
	ts.must("POST", "/v1/sessions", "", twoTurns, 201)
	evs := ts.open("/v1/sessions/s/events", "", "")
	ts.must("POST", "/v1/sessions/s/prompt", "", `{"text":"one"}`, 200)
	seen := evs.until("agent_end")
	last := seen[len(seen)-1].id
	evs.close()
	ts.stop()
	st.Close()

	st = openSQLite(t, path)
	defer st.Close()
	ts = start(t, st)
	again := ts.open("/v1/sessions/s/events", "", last)
	lost := again.event()
	if lost.event != "events_lost" || lost.id != "" {
		t.Fatalf("first message after the restart: %+v, want events_lost without an id", lost)
	}
	ts.must("POST", "/v1/sessions/s/prompt", "", `{"text":"two"}`, 200)
	after := again.until("agent_end")
	lastSeq, _ := strconv.ParseUint(last, 10, 64)
	first, _ := strconv.ParseUint(after[0].id, 10, 64)
	if first <= lastSeq {
		t.Fatalf("after the restart seq %d, not past %d", first, lastSeq)
	}
	contiguous(t, first-1, after) // no gap and no duplicate from there on
}

// openSQLite opens the SQLite store at path; the caller closes it.
func openSQLite(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
