package command

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
)

// response parses line and writes its response, checking that the
// response is one line of UTF-8 JSON that encoding/json reads.
func response(t *testing.T, line string) (Header, map[string]any, error) {
	t.Helper()
	h, _, err := Parse([]byte(line))
	out := AppendResponse(nil, h, nil, err)
	if !utf8.Valid(out) {
		t.Errorf("%q: response %q is not UTF-8", line, out)
	}
	var r map[string]any
	if err := json.Unmarshal(out, &r); err != nil {
		t.Errorf("%q: encoding/json cannot read response %s: %v", line, out, err)
	}
	return h, r, err
}

// TestIDEcho: an id a client can read back is echoed byte for byte.
func TestIDEcho(t *testing.T) {
	for _, id := range []string{
		`"7"`, `7`, `-3`, `0`, `"a-b c"`, `"é✓😀"`, `"\u00ff\n\"\\"`, `"\ud800"`, `""`,
		`12345678901234567890`, `1.5e3`, `-0.25E-2`, `1e-999`, `1.7976931348623157e308`,
		`true`, `false`, `[]`, `{}`, `[1,"x",null]`, `{"a" : 1, "b":[true, {"c":"d"}]}`,
	} {
		line := `{"cmd":"list_sessions","id":` + id + `}`
		h, _, err := response(t, line)
		if err != nil || string(h.ID) != id {
			t.Errorf("%s: id %s, %v; want %s", line, h.ID, err, id)
		}
		if out := string(AppendResponse(nil, h, nil, nil)); !strings.HasPrefix(out, `{"type":"response","id":`+id+`,"cmd":"list_sessions",`) {
			t.Errorf("%s: response %s", line, out)
		}
	}
	h, r, err := response(t, `{"cmd":"list_sessions"}`)
	if err != nil || h.ID != nil || r["id"] != nil {
		t.Errorf("no id: %s %v %v", h.ID, r, err)
	}
}

// TestIDInvalidUTF8: an id whose strings are not UTF-8 is echoed with
// U+FFFD for each bad sequence, as encoding/json reads it.
func TestIDInvalidUTF8(t *testing.T) {
	for _, c := range []struct{ id, want string }{
		{"\"\xff\xfe\"", `"��"`},
		{"\"a\xffb\"", `"a�b"`},
		{"\"\xe2\x82\"", `"��"`}, // a cut sequence, byte by byte as encoding/json
		{"[\"\xff\",1,{\"k\":[]},true,null]", `["�",1,{"k":[]},true,null]`},
		{"{\"n\": [1.5, {}], \"\xff\": \"x\xfe\"}", `{"n":[1.5,{}],"�":"x�"}`}, // keys in encoding/json's order
	} {
		line := `{"cmd":"list_sessions","id":` + c.id + `}`
		h, r, err := response(t, line)
		if err != nil || string(h.ID) != c.want {
			t.Errorf("%q: id %s, %v; want %s", line, h.ID, err, c.want)
		}
		var want any
		if err := json.Unmarshal([]byte(c.id), &want); err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(r["id"]); string(got) != mustMarshal(t, want) {
			t.Errorf("%q: the response's id reads as %s, the command's as %s", line, got, mustMarshal(t, want))
		}
	}
}

func mustMarshal(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestIDOutOfRange: an id holding a number that a float64 cannot hold
// is a bad_request, answered with id null, that encoding/json can read.
func TestIDOutOfRange(t *testing.T) {
	long := "1" + strings.Repeat("0", 400)
	for _, c := range []struct{ id, number string }{
		{`1e999`, `1e999`},
		{`-1e999`, `-1e999`},
		{`1E+309`, `1E+309`},
		{`[1, 1e400]`, `1e400`},
		{`{"a":{"b":[-2e308]}}`, `-2e308`},
		{"[\"\xff\", 1e999]", `1e999`},
		{long, long[:40] + "…"},
	} {
		line := `{"cmd":"list_sessions","id":` + c.id + `}`
		h, r, err := response(t, line)
		want := `field "id": number ` + c.number + ` is out of range`
		var e *tack.Error
		if !errors.As(err, &e) || e.Code != events.CodeBadRequest || e.Message != want {
			t.Errorf("%.60s: %v, want bad_request %q", line, err, want)
		}
		if h.ID != nil || r["id"] != nil || r["cmd"] != "list_sessions" {
			t.Errorf("%.60s: header %+v, response %v", line, h, r)
		}
	}
	// a line that is wrong on two counts is answered for the first
	if _, r, err := response(t, `{"id":1e999}`); err == nil || !strings.Contains(err.Error(), `a command needs "cmd"`) || r["id"] != nil {
		t.Errorf("no cmd, id 1e999: %v %v", r, err)
	}
}

// FuzzIDEcho: whatever a command line's id, its response is UTF-8 JSON
// that encoding/json reads, and an id that was already such text is
// echoed byte for byte.
func FuzzIDEcho(f *testing.F) {
	for _, id := range []string{`"7"`, `7`, "\"\xff\"", `1e999`, `{"a":[1,"b"]}`, "[\"\xc3\",-0.5e-7]"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		line := `{"cmd":"list_sessions","id":` + id + `}`
		if !json.Valid([]byte(line)) {
			return // not a JSON line
		}
		h, _, err := response(t, line)
		if !json.Valid([]byte(id)) {
			return // more than an id: keys of the line too
		}
		if err == nil && h.ID == nil && strings.TrimSpace(id) != "null" {
			t.Fatalf("%q: no id and no error", line)
		}
		var v any
		if utf8.ValidString(id) && json.Unmarshal([]byte(id), &v) == nil && (err != nil || string(h.ID) != strings.TrimSpace(id)) && v != nil {
			t.Fatalf("%q: id %s, %v; want it as sent", line, h.ID, err)
		}
	})
}
