package http

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// TestDeleteAndClose: DELETE removes the session — its event stream ends,
// and it is invalid_session on every route and gone from the list, loaded
// or only stored — while POST …/close only unloads it: its next use
// restores it whole.
func TestDeleteAndClose(t *testing.T) {
	st := openSQLite(t, filepath.Join(t.TempDir(), "tack.db"))
	defer st.Close()
	ts := start(t, st, WithAuth(testAuth(t)))
	for _, id := range []string{"loaded", "stored", "closed"} {
		ts.must("POST", "/v1/sessions", aliceToken, `{"session":"`+id+`","script":{"turns":[{"text":"hi"}]}}`, 201)
		ts.must("POST", "/v1/sessions/"+id+"/prompt", aliceToken, `{"text":"hello `+id+`"}`, 200)
		ts.waitState("/v1/sessions/"+id, aliceToken, "idle")
	}
	ts.must("POST", "/v1/sessions/stored/close", aliceToken, "", 204)
	ts.must("POST", "/v1/sessions/closed/close", aliceToken, "", 204)

	events := ts.open("/v1/sessions/loaded/events?access_token="+aliceToken, "", "")
	ts.must("DELETE", "/v1/sessions/loaded", bobToken, "", 404) // not bob's: nothing happens
	ts.must("GET", "/v1/sessions/loaded", aliceToken, "", 200)
	ts.must("DELETE", "/v1/sessions/loaded", aliceToken, "", 204)
	for {
		if _, err := events.next(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("the stream ended with %v", err)
			}
			break
		}
	}
	ts.must("DELETE", "/v1/sessions/stored", aliceToken, "", 204)
	for _, id := range []string{"loaded", "stored"} {
		for _, route := range []struct{ method, path string }{
			{"GET", ""}, {"GET", "/messages"}, {"DELETE", ""}, {"POST", "/close"}, {"POST", "/prompt"},
		} {
			body := ts.must(route.method, "/v1/sessions/"+id+route.path, aliceToken, `{"text":"x"}`, 404)
			if !strings.Contains(body, `"invalid_session"`) {
				t.Errorf("%s %s after the delete: %s", route.method, route.path, body)
			}
		}
	}
	list := ts.must("GET", "/v1/sessions", aliceToken, "", 200)
	if strings.Contains(list, `"session":"loaded"`) || strings.Contains(list, `"session":"stored"`) || !strings.Contains(list, `"session":"closed"`) {
		t.Fatalf("list after the deletes: %s", list)
	}
	// The closed session comes back whole on its next use.
	if msgs := ts.must("GET", "/v1/sessions/closed/messages", aliceToken, "", 200); !strings.Contains(msgs, "hello closed") {
		t.Fatalf("the closed session's messages: %s", msgs)
	}
	// A deleted id is free again, with nothing of the old session.
	ts.must("POST", "/v1/sessions", aliceToken, `{"session":"stored","model":"script:demo"}`, 201)
	if msgs := ts.must("GET", "/v1/sessions/stored/messages", aliceToken, "", 200); msgs != `{"messages":[]}` {
		t.Fatalf("the re-created session's messages: %s", msgs)
	}
}

// TestDeleteOverWebSocket: delete_session sent on a session's socket is
// answered, then the socket closes as for a closed session, and the
// session is gone.
func TestDeleteOverWebSocket(t *testing.T) {
	ts := start(t, nil)
	ts.must("POST", "/v1/sessions", "", `{"session":"s","script":{"turns":[{"text":"hi"}]}}`, 201)
	c := ts.ws("/v1/sessions/s/ws", "")
	c.send(`{"id":1,"cmd":"delete_session"}`)
	if got := c.response("1"); got != `{"type":"response","id":1,"cmd":"delete_session","ok":true,"data":{}}` {
		t.Fatalf("delete_session: %s", got)
	}
	if code, reason := c.ended(); code != websocket.StatusNormalClosure || reason != reasonSessionClosed {
		t.Fatalf("closed with %v %q", code, reason)
	}
	ts.must("GET", "/v1/sessions/s", "", "", 404)
}
