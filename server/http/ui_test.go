package http

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// uiFiles is a UI of two files, the script large enough to be gzipped.
var uiFiles = fstest.MapFS{
	"index.html": {Data: []byte(`<!doctype html><script src="/app.js"></script>`)},
	"app.js":     {Data: []byte(strings.Repeat("console.log('tack');\n", 200))},
}

func TestUIServesItsFilesWithoutCredential(t *testing.T) {
	ts := start(t, nil, WithAuth(testAuth(t)), WithUI(uiFiles))
	for _, tc := range []struct{ path, body, ctype string }{
		{"/", string(uiFiles["index.html"].Data), "text/html; charset=utf-8"},
		{"/?session=s-1", string(uiFiles["index.html"].Data), "text/html; charset=utf-8"},
		{"/app.js", string(uiFiles["app.js"].Data), "text/javascript; charset=utf-8"},
	} {
		r := ts.do("GET", tc.path, "", "")
		if r.status != 200 || r.body != strings.TrimSpace(tc.body) {
			t.Fatalf("GET %s: %d %.80q", tc.path, r.status, r.body)
		}
		if got := r.header.Get("Content-Type"); got != tc.ctype {
			t.Errorf("GET %s: Content-Type %q, want %q", tc.path, got, tc.ctype)
		}
		if got := r.header.Get("Content-Security-Policy"); got != uiPolicy || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: Content-Security-Policy %q, X-Content-Type-Options %q", tc.path, got, r.header.Get("X-Content-Type-Options"))
		}
		if r.header.Get("Cache-Control") != "no-cache" || r.header.Get("ETag") == "" {
			t.Errorf("GET %s: Cache-Control %q, ETag %q", tc.path, r.header.Get("Cache-Control"), r.header.Get("ETag"))
		}
	}
	// The API stays behind the credential, and an unknown path is still
	// the API's JSON 404, not the page.
	if r := ts.do("GET", "/v1/catalog", "", ""); r.status != 401 {
		t.Fatalf("GET /v1/catalog without a token: %d %s", r.status, r.body)
	}
	if r := ts.do("GET", "/nope.js", "", ""); r.status != 401 {
		t.Fatalf("GET /nope.js without a token: %d %s", r.status, r.body)
	}
	// An answer that echoes the request (the path) is never sniffed
	// into a page.
	r := ts.do("GET", "/nope.js", aliceToken, "")
	if r.status != 404 || !strings.Contains(r.body, `"unknown_command"`) || r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("GET /nope.js: %d %s %v", r.status, r.body, r.header)
	}
	if r := ts.do("POST", "/", "", ""); r.status != 401 {
		t.Fatalf("POST / without a token: %d %s", r.status, r.body)
	}
}

func TestUIRevalidatesAndGzips(t *testing.T) {
	ts := start(t, nil, WithUI(uiFiles))
	get := func(header ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.url+"/app.js", nil)
		for i := 0; i < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	plain := get("Accept-Encoding", "identity")
	if plain.Header.Get("Content-Encoding") != "" {
		t.Fatalf("gzipped without Accept-Encoding: %v", plain.Header)
	}
	if res := get("Accept-Encoding", "identity", "If-None-Match", plain.Header.Get("ETag")); res.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match of the current ETag: %d", res.StatusCode)
	}
	gz := get("Accept-Encoding", "gzip, br")
	if gz.Header.Get("Content-Encoding") != "gzip" || gz.Header.Get("ETag") == plain.Header.Get("ETag") {
		t.Fatalf("gzip: %v", gz.Header)
	}
	zr, err := gzip.NewReader(gz.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(body, uiFiles["app.js"].Data) {
		t.Fatalf("gunzipped body differs (%v)", err)
	}
	if res := get("Accept-Encoding", "gzip;q=0"); res.Header.Get("Content-Encoding") != "" {
		t.Fatalf("gzip;q=0 was gzipped")
	}
}

func TestNoUIWithoutTheOption(t *testing.T) {
	ts := start(t, nil)
	if r := ts.do("GET", "/", "", ""); r.status != 404 {
		t.Fatalf("GET / without WithUI: %d %s", r.status, r.body)
	}
}

func TestCatalog(t *testing.T) {
	ts := start(t, nil)
	var c struct {
		Models []struct {
			Name          string `json:"name"`
			ContextWindow *int64 `json:"context_window"`
		} `json:"models"`
		Tools   []struct{ Name, Description, Kind string } `json:"tools"`
		Plugins []string                                   `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(ts.must("GET", "/v1/catalog", "", "", 200)), &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Models) != 1 || c.Models[0].Name != "script:demo" || c.Models[0].ContextWindow == nil || *c.Models[0].ContextWindow != 8000 {
		t.Fatalf("models: %+v", c.Models)
	}
	var tools []string
	for _, tool := range c.Tools {
		if tool.Description == "" || (tool.Kind != "killable" && tool.Kind != "immune") {
			t.Errorf("tool %+v", tool)
		}
		tools = append(tools, tool.Name)
	}
	if want := []string{"echo", "list_files", "read_file", "shell", "sleep", "sleep_immune", "sleep_stubborn", "subagent", "todo_write", "write_file"}; !reflect.DeepEqual(tools, want) {
		t.Errorf("tools %v, want %v", tools, want)
	}
	if want := []string{"approval", "ask_user", "large_result_offload", "limits", "loop_detection", "refuse"}; !reflect.DeepEqual(c.Plugins, want) {
		t.Errorf("plugins %v, want %v", c.Plugins, want)
	}
	if r := ts.do("GET", "/v1/catalog?x=1", "", ""); r.status != 400 {
		t.Fatalf("GET /v1/catalog?x=1: %d", r.status)
	}
}
