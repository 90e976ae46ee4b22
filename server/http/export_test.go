package http

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExportImport: alice's session exported over HTTP imports as bob's
// with the same history (all of it); only the owner exports, and bodies
// that are not a document of the format are refused naming what is
// wrong.
func TestExportImport(t *testing.T) {
	ts := start(t, nil, WithAuth(testAuth(t)))
	ts.must("POST", "/v1/sessions", aliceToken, `{"session":"s","system":"be brief","script":{"turns":[{"text":"hi"}]}}`, 201)
	ts.must("POST", "/v1/sessions/s/prompt", aliceToken, `{"text":"hello"}`, 200)
	ts.waitState("/v1/sessions/s", aliceToken, "idle")
	doc := ts.must("GET", "/v1/sessions/s/export", aliceToken, "", 200)
	var parsed struct {
		Format  string          `json:"format"`
		Session string          `json:"session"`
		Config  json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal([]byte(doc), &parsed); err != nil || parsed.Format != "tack.session/v1" || parsed.Session != "s" ||
		string(parsed.Config) != `{"script":{"turns":[{"text":"hi"}]},"system":"be brief"}` {
		t.Fatalf("export %s (%v)", doc, err)
	}
	ts.must("GET", "/v1/sessions/s/export", bobToken, "", 404)

	if got := ts.must("POST", "/v1/sessions/import?session=copy", bobToken, doc, 201); got != `{"session":"copy"}` {
		t.Fatalf("import answered %s", got)
	}
	want := ts.must("GET", "/v1/sessions/s/messages?all=true", aliceToken, "", 200)
	if got := ts.must("GET", "/v1/sessions/copy/messages?all=true", bobToken, "", 200); got != want {
		t.Fatalf("the import's messages\n%s\nwant\n%s", got, want)
	}
	ts.must("GET", "/v1/sessions/copy", aliceToken, "", 404)
	if got := ts.must("POST", "/v1/sessions/import", bobToken, doc, 201); !strings.HasPrefix(got, `{"session":"s-`) {
		t.Fatalf("an import without an id answered %s", got)
	}

	swap := func(old, new string) string { return strings.Replace(doc, old, new, 1) }
	for _, tc := range []struct{ name, path, body, want string }{
		{"exists", "/v1/sessions/import?session=copy", doc, `session \"copy\" exists`},
		{"bad id", "/v1/sessions/import?session=a/b", doc, `session \"a/b\" is not a valid id`},
		{"not JSON", "/v1/sessions/import", "{", "the body is not a JSON document"},
		{"format", "/v1/sessions/import", swap(`"tack.session/v1"`, `"tack.session/v9"`), `document.format is \"tack.session/v9\"`},
		{"unknown field", "/v1/sessions/import", swap(`"title"`, `"tittle"`), `unknown field \"tittle\"`},
		{"config", "/v1/sessions/import", swap(`"system":"be brief"`, `"sistem":"be brief"`), `document.config: unknown field \"sistem\" in create_session`},
		{"role", "/v1/sessions/import", swap(`"role":"user"`, `"role":"root"`), `message 0 has role \"root\"`},
		{"compacted late", "/v1/sessions/import", swap(`"content":"hi"`, `"content":"hi","compacted":true`), "message 1 is compacted but follows working messages"},
		{"image", "/v1/sessions/import", swap(`"content":"hello"`, `"content":"hello","images":[{"url":"file:///etc/passwd"}]`), "message 0: images[0]: url must be a data: URL or https://"},
		{"image of the model", "/v1/sessions/import", swap(`"content":"hi"`, `"content":"hi","images":[{"url":"https://x/a.png"}]`), "message 1 (assistant) has images: only user messages have them"},
		{"parameter", "/v1/sessions/import?id=x", doc, `takes no parameter \"id\"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ts.must("POST", tc.path, bobToken, tc.body, 400); !strings.Contains(got, tc.want) {
				t.Fatalf("%s, want %s", got, tc.want)
			}
		})
	}
}
