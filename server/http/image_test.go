package http

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/tack-run/tack"
)

// pngURL is a data URL of a tiny PNG (its signature and some bytes).
var pngURL = "data:image/png;base64," + base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 24)...))

// reportScript answers each request with a report of what it received.
const reportScript = `{"session":"%s","script":{"turns":[{"report":true}],"when_exhausted":"repeat_last"}}`

// TestImages: an image sent with a prompt over REST, over a WebSocket or
// as an AG-UI binary part reaches the model (the scripted model's report
// names it), is stored with the user message (get_messages shows it), and
// steering carries images too; an image of the wrong type, signature or
// size is bad_request and nothing is run.
func TestImages(t *testing.T) {
	ts := start(t, nil, WithAuth(testAuth(t)))
	last := func(id string) string {
		t.Helper()
		msgs := ts.must("GET", "/v1/sessions/"+id+"/messages", aliceToken, "", 200)
		return msgs[strings.LastIndex(msgs, `{"role":"assistant"`):]
	}
	img := `{"url":"` + pngURL + `","detail":"low"}`

	ts.must("POST", "/v1/sessions", aliceToken, fmt.Sprintf(reportScript, "rest"), 201)
	ts.must("POST", "/v1/sessions/rest/prompt", aliceToken, `{"text":"what is this?","images":[`+img+`]}`, 200)
	ts.waitState("/v1/sessions/rest", aliceToken, "idle")
	msgs := ts.must("GET", "/v1/sessions/rest/messages", aliceToken, "", 200)
	if !strings.Contains(msgs, `{"role":"user","content":"what is this?",`) || !strings.Contains(msgs, `"images":[{"url":"`+pngURL+`","detail":"low"}]`) {
		t.Fatalf("the user message does not hold its image: %s", msgs)
	}
	if got := last("rest"); !strings.Contains(got, `{\"message_count\":1,\"images\":[{\"url\":\"`+pngURL+`\",\"detail\":\"low\"}]}`) {
		t.Fatalf("the model's report: %s", got)
	}

	ws := ts.ws("/v1/sessions/rest/ws", aliceToken)
	ws.send(`{"cmd":"prompt","id":"p","text":"","images":[{"url":"https://example.com/cat.jpg"}]}`)
	for f := ws.next(); !strings.Contains(f, `"type":"agent_end"`) || !strings.Contains(f, `"run_id":"r-2"`); f = ws.next() {
	}
	if got := last("rest"); !strings.Contains(got, `\"message_count\":3`) || !strings.Contains(got, `{\"url\":\"https://example.com/cat.jpg\"}]}`) {
		t.Fatalf("the report after the WebSocket prompt: %s", got)
	}

	ts.must("POST", "/v1/sessions", aliceToken, fmt.Sprintf(reportScript, "agui"), 201)
	data := strings.TrimPrefix(pngURL, "data:image/png;base64,")
	ts.must("POST", "/v1/sessions/agui/agui", aliceToken, `{"threadId":"agui","runId":"r","messages":[{"id":"m","role":"user","content":[`+
		`{"type":"text","text":"look"},{"type":"binary","mimeType":"image/png","data":"`+data+`"}]}]}`, 200)
	if got := last("agui"); !strings.Contains(got, `{\"url\":\"`+pngURL+`\"}`) {
		t.Fatalf("the report after the AG-UI run: %s", got)
	}

	gif := "data:image/gif;base64," + base64.StdEncoding.EncodeToString([]byte("GIF89a...."))
	for _, tc := range []struct{ name, image, want string }{
		{"type", `{"url":"data:image/svg+xml;base64,PHN2Zy8+"}`, `images[0]: media type \"image/svg+xml\"`},
		{"signature", `{"url":"` + strings.Replace(gif, "image/gif", "image/png", 1) + `"}`, `images[0]: the bytes are not image/png`},
		{"scheme", `{"url":"file:///etc/passwd"}`, `images[0]: url must be a data: URL or https://`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := ts.must("POST", "/v1/sessions/rest/prompt", aliceToken, `{"text":"x","images":[`+tc.image+`]}`, 400)
			if !strings.Contains(body, tc.want) {
				t.Fatalf("%s, want %s", body, tc.want)
			}
			body = ts.must("POST", "/v1/sessions/rest/steer", aliceToken, `{"text":"x","images":[`+tc.image+`]}`, 400)
			if !strings.Contains(body, tc.want) {
				t.Fatalf("steer: %s, want %s", body, tc.want)
			}
		})
	}
	if st := ts.waitState("/v1/sessions/rest", aliceToken, "idle"); st["message_count"] != float64(4) {
		t.Fatalf("a refused image changed the history: %v", st)
	}
}

// TestImageSizeLimit: a data URL over the runtime's image limit is
// refused, one at it is taken.
func TestImageSizeLimit(t *testing.T) {
	raw := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 92)...) // 100 bytes
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(raw)
	for _, tc := range []struct {
		limit  int64
		status int
	}{{100, 200}, {99, 400}} {
		ts := startWith(t, nil, []tack.Option{tack.WithMaxImageBytes(tc.limit)})
		ts.must("POST", "/v1/sessions", "", fmt.Sprintf(reportScript, "s"), 201)
		body := ts.must("POST", "/v1/sessions/s/prompt", "", `{"text":"x","images":[{"url":"`+url+`"}]}`, tc.status)
		if tc.status == 400 && !strings.Contains(body, "images[0]: the image is larger than the limit of 99 bytes") {
			t.Fatalf("limit %d: %s", tc.limit, body)
		}
	}
}

// TestQueuedImages: a steering message's images and a queued prompt's
// reach the model with them, each in its own turn, as the scripted
// model's reports show.
func TestQueuedImages(t *testing.T) {
	ts := start(t, nil)
	ts.must("POST", "/v1/sessions", "", `{"session":"q","script":{"turns":[
		{"tool_calls":[{"name":"sleep_immune","args":{"ms":300}}]},{"report":true},{"report":true}]}}`, 201)
	ts.must("POST", "/v1/sessions/q/prompt", "", `{"text":"go"}`, 200)
	ts.waitState("/v1/sessions/q", "", "executing_tools")
	ts.must("POST", "/v1/sessions/q/steer", "", `{"text":"look","interrupt_tools":false,"images":[{"url":"https://x/steer.png"}]}`, 200)
	ts.must("POST", "/v1/sessions/q/prompt", "", `{"text":"and this","images":[{"url":"https://x/queued.png","detail":"high"}]}`, 200)
	ts.waitState("/v1/sessions/q", "", "idle")
	msgs := ts.must("GET", "/v1/sessions/q/messages", "", "", 200)
	for _, want := range []string{
		`{"role":"user","content":"look","images":[{"url":"https://x/steer.png"}]}`,
		`{"role":"user","content":"and this","images":[{"url":"https://x/queued.png","detail":"high"}]}`,
		`\"images\":[{\"url\":\"https://x/steer.png\"}]}`,
		`\"images\":[{\"url\":\"https://x/steer.png\"},{\"url\":\"https://x/queued.png\",\"detail\":\"high\"}]}`,
	} {
		if !strings.Contains(msgs, want) {
			t.Fatalf("no %s in %s", want, msgs)
		}
	}
}
