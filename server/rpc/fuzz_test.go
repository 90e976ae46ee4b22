package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tack-run/tack"
)

// protocolCodes are the error codes of docs/protocol.md.
var protocolCodes = map[string]bool{
	"busy": true, "bad_request": true, "store_failed": true, "unknown_command": true,
	"invalid_session": true, "not_alive": true, "queue_full": true, "rejected": true,
	"no_pending_approval": true, "no_pending_question": true, "unknown_model": true,
	"unknown_tool": true, "internal": true,
}

// FuzzServe feeds arbitrary input to a connection with a 64-byte line
// limit: it must not panic, every line but an empty one gets exactly one
// response, in order, and every error response carries a protocol code.
// Inputs naming create_session are skipped, so that no session exists and
// a fuzzed script can never run a tool such as shell.
func FuzzServe(f *testing.F) {
	for _, s := range []string{
		`{"cmd":"list_sessions","id":1}`,
		"{\"cmd\":\"get_state\",\"session\":\"s\"}\n\n{\"cmd\":\"abort\",\"session\":\"s\",\"kill_tool\":\"all\"}\r\n",
		`{"cmd":"prompt","session":"s","text":"` + strings.Repeat("x", 100) + `"}` + "\n{\"cmd\":\"list_sessions\"}",
		"{\"cmd\":7}\n[1]\n \n{\"cmd\":\"dance\",\"id\":{\"a\":1}}\n{\"cmd\":\"close_session\",\"session\":\"s\",\"x\":null}",
		"\r\n\r\n{\"cmd\":\"get_messages\",\"session\":5}\n\xff\n",
	} {
		f.Add(s)
	}
	rt, err := tack.New()
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(rt.Close)
	f.Fuzz(func(t *testing.T, in string) {
		if strings.Contains(in, "create_session") {
			t.Skip("no sessions: a fuzzed script could run shell")
		}
		var out bytes.Buffer
		if err := Serve(context.Background(), rt, strings.NewReader(in), &out, WithMaxLineBytes(64)); err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, l := range strings.Split(in, "\n") {
			if len(strings.TrimSuffix(l, "\r")) > 0 {
				want++
			}
		}
		got := 0
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			var r struct {
				Type  string          `json:"type"`
				OK    *bool           `json:"ok"`
				Data  json.RawMessage `json:"data"`
				Error *struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("output line is not JSON: %q", l)
			}
			if r.Type != "response" || r.OK == nil {
				t.Fatalf("not a response: %s", l)
			}
			got++
			if *r.OK != (r.Error == nil) || *r.OK != (r.Data != nil) {
				t.Fatalf("ok disagrees with data and error: %s", l)
			}
			if r.Error != nil && (!protocolCodes[r.Error.Code] || r.Error.Message == "") {
				t.Fatalf("error without a protocol code or a message: %s", l)
			}
		}
		if got != want {
			t.Fatalf("%d responses for %d lines\n in: %q\nout: %s", got, want, in, out.String())
		}
	})
}
