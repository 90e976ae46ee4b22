package http

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/tools/workspace"
)

// TestFiles: the owner puts, lists, gets and deletes the files of a
// session's workspace, which the session's tools see; another user gets
// invalid_session for every route, as for a session that does not exist;
// a path leaving the workspace is refused.
func TestFiles(t *testing.T) {
	root := filepath.Join(t.TempDir(), "workspaces")
	ts := startWith(t, nil, []tack.Option{tack.WithWorkspaces(workspace.PerSession(root))}, WithAuth(testAuth(t)))
	ts.must("POST", "/v1/sessions", aliceToken, `{"session":"a","tools":["read_file"],"script":{"turns":[`+
		`{"tool_calls":[{"name":"read_file","args":{"path":"docs/in.txt"}}]},{"text":"read"}]}}`, 201)
	if got := ts.must("GET", "/v1/sessions/a/files", aliceToken, "", 200); got != `{"files":[]}` {
		t.Fatalf("no workspace yet: %s", got)
	}
	ts.must("HEAD", "/v1/sessions/a/files", aliceToken, "", 200)
	var entry fileEntry
	if err := json.Unmarshal([]byte(ts.must("PUT", "/v1/sessions/a/files/docs/in.txt", aliceToken, "hello file", 201)), &entry); err != nil {
		t.Fatal(err)
	}
	if entry.Path != "docs/in.txt" || entry.Size != 10 || entry.Modified.IsZero() {
		t.Fatalf("put answered %+v", entry)
	}
	if b, err := os.ReadFile(filepath.Join(root, "a", "docs", "in.txt")); err != nil || string(b) != "hello file" {
		t.Fatalf("on disk: %q, %v", b, err)
	}
	ts.must("POST", "/v1/sessions/a/prompt", aliceToken, `{"text":"read it"}`, 200)
	ts.waitState("/v1/sessions/a", aliceToken, "idle")
	if got := ts.must("GET", "/v1/sessions/a/messages", aliceToken, "", 200); !strings.Contains(got, `"content":"hello file"`) {
		t.Fatalf("read_file did not see the uploaded file: %s", got)
	}
	var list struct{ Files []fileEntry }
	if err := json.Unmarshal([]byte(ts.must("GET", "/v1/sessions/a/files", aliceToken, "", 200)), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Files) != 1 || list.Files[0].Path != "docs/in.txt" || list.Files[0].Size != 10 {
		t.Fatalf("list: %+v", list)
	}
	r := ts.do("GET", "/v1/sessions/a/files/docs/in.txt", aliceToken, "")
	if r.status != 200 || r.body != "hello file" || r.header.Get("Content-Disposition") != `attachment; filename="in.txt"` ||
		r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("get: %d %q %v", r.status, r.body, r.header)
	}

	t.Run("another user", func(t *testing.T) {
		const notFound = `{"error":{"code":"invalid_session","message":"no session \"a\""}}`
		for _, req := range []struct{ method, path, body string }{
			{"GET", "/v1/sessions/a/files", ""},
			{"GET", "/v1/sessions/a/files/docs/in.txt", ""},
			{"PUT", "/v1/sessions/a/files/docs/in.txt", "bob was here"},
			{"PUT", "/v1/sessions/a/files/bob.txt", "bob was here"},
			{"DELETE", "/v1/sessions/a/files/docs/in.txt", ""},
		} {
			if got := ts.must(req.method, req.path, bobToken, req.body, 404); got != notFound {
				t.Fatalf("%s %s as bob: %s", req.method, req.path, got)
			}
		}
		assertTree(t, filepath.Join(root, "a"), "docs/in.txt=hello file")
	})

	t.Run("leaving the workspace", func(t *testing.T) {
		secret := filepath.Join(t.TempDir(), "secret.txt")
		if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Dir(secret), filepath.Join(root, "a", "out")); err != nil {
			t.Fatal(err)
		}
		for _, req := range []struct{ method, path string }{
			{"GET", "/v1/sessions/a/files/out/secret.txt"},
			{"PUT", "/v1/sessions/a/files/out/new.txt"},
			{"DELETE", "/v1/sessions/a/files/out/secret.txt"},
			{"PUT", `/v1/sessions/a/files/..%5Cescape.txt`},
		} {
			if r := ts.do(req.method, req.path, aliceToken, "pwned"); r.status != 400 || !strings.Contains(r.body, `"code":"bad_request"`) {
				t.Fatalf("%s %s: %d %s, want 400 bad_request", req.method, req.path, r.status, r.body)
			}
		}
		for _, p := range []string{"/v1/sessions/a/files/../../escape.txt", "/v1/sessions/a/files/docs/%2e%2e/%2e%2e/%2e%2e/escape.txt"} {
			if r := ts.do("PUT", p, aliceToken, "pwned"); r.status < 300 {
				t.Fatalf("PUT %s: %d %s", p, r.status, r.body)
			}
		}
		if b, err := os.ReadFile(secret); err != nil || string(b) != "secret" {
			t.Fatalf("the file outside: %q, %v", b, err)
		}
		if err := os.Remove(filepath.Join(root, "a", "out")); err != nil {
			t.Fatal(err)
		}
		assertTree(t, root, "a/docs/in.txt=hello file")
	})

	ts.must("DELETE", "/v1/sessions/a/files/docs/in.txt", aliceToken, "", 204)
	if got := ts.must("GET", "/v1/sessions/a/files", aliceToken, "", 200); got != `{"files":[]}` {
		t.Fatalf("after delete: %s", got)
	}
	ts.must("GET", "/v1/sessions/a/files/docs/in.txt", aliceToken, "", 404)
	ts.must("GET", "/v1/sessions/nope/files", aliceToken, "", 404)
}

// assertTree fails unless the regular files under dir are exactly want
// ("path=content", sorted by path).
func assertTree(t *testing.T, dir string, want ...string) {
	t.Helper()
	var got []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got = append(got, filepath.ToSlash(rel)+"="+string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s holds %q, want %q", dir, got, want)
	}
}

// TestWorkspaceLeftUnderAnIdIsNotInherited: a session made under an id
// that an earlier session's workspace still uses starts with an empty
// workspace. Without a store, a closed session frees its id and a restart
// forgets every session (generated ids start again at s-1), but their
// workspaces stay on disk: another user who took the id read, changed
// and deleted the first user's files.
func TestWorkspaceLeftUnderAnIdIsNotInherited(t *testing.T) {
	root := filepath.Join(t.TempDir(), "workspaces")
	opts := []tack.Option{tack.WithWorkspaces(workspace.PerSession(root))}
	script := `"script":{"turns":[{"text":"hi"}]}`
	noSecret := func(ts *testServer, id string) {
		t.Helper()
		if r := ts.do("GET", "/v1/sessions/"+id+"/files/secret.txt", bobToken, ""); r.status != 404 {
			t.Errorf("bob reads the file alice left in %s's workspace: %d %q", id, r.status, r.body)
		}
		if r := ts.must("GET", "/v1/sessions/"+id+"/files", bobToken, "", 200); !strings.Contains(r, `"files":[]`) {
			t.Errorf("bob's new session %s lists %s", id, r)
		}
	}

	t.Run("closed", func(t *testing.T) {
		ts := startWith(t, nil, opts, WithAuth(testAuth(t)))
		ts.must("POST", "/v1/sessions", aliceToken, `{"session":"proj",`+script+`}`, 201)
		ts.must("PUT", "/v1/sessions/proj/files/secret.txt", aliceToken, "alice's secret", 201)
		ts.must("POST", "/v1/sessions/proj/close", aliceToken, `{}`, 204)
		ts.must("POST", "/v1/sessions", bobToken, `{"session":"proj",`+script+`}`, 201)
		noSecret(ts, "proj")
	})
	t.Run("restarted", func(t *testing.T) {
		ts := startWith(t, nil, opts, WithAuth(testAuth(t)))
		ts.must("POST", "/v1/sessions", aliceToken, `{`+script+`}`, 201)
		ts.must("PUT", "/v1/sessions/s-1/files/secret.txt", aliceToken, "alice's secret", 201)
		ts.stop()
		ts = startWith(t, nil, opts, WithAuth(testAuth(t)))
		if r := ts.must("POST", "/v1/sessions", bobToken, `{`+script+`}`, 201); !strings.Contains(r, `"s-1"`) {
			t.Fatalf("bob's first session after the restart: %s, want s-1", r)
		}
		noSecret(ts, "s-1")
	})
}
