//go:build unix

package http

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/tools/workspace"
)

// TestFilesRefuseNamedPipes: GET and PUT of a named pipe in a session's
// workspace (its shell can `mkfifo p`) answer 400 bad_request at once,
// and PUT writes nothing into it. They opened it as a file and open(2)
// waited for the other end for ever, after the client had gone too:
// each request held an OS thread and a connection, and ten thousand of
// them froze the server. A directory is answered as before.
func TestFilesRefuseNamedPipes(t *testing.T) {
	root := filepath.Join(t.TempDir(), "workspaces")
	ts := startWith(t, nil, []tack.Option{tack.WithWorkspaces(workspace.PerSession(root))}, WithAuth(testAuth(t)))
	ts.must("POST", "/v1/sessions", aliceToken, `{"session":"a","script":{"turns":[{"text":"x"}]}}`, 201)
	ts.must("PUT", "/v1/sessions/a/files/d/seed.txt", aliceToken, "x", 201)
	p := filepath.Join(root, "a", "p")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	release := func() { // lets a handler stuck opening the pipe go
		for _, flag := range []int{os.O_WRONLY, os.O_RDONLY} {
			if f, err := os.OpenFile(p, flag|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
	}
	t.Cleanup(release)
	promptly := func(method, path, body string) response {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, ts.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		res, err := ts.client.Do(req)
		if err != nil {
			release()
			t.Errorf("%s %s: no answer in 5 s: %v", method, path, err)
			return response{}
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return response{status: res.StatusCode, header: res.Header, body: strings.TrimSpace(string(b))}
	}
	const refused = `{"error":{"code":"bad_request","message":"\"p\" is not a regular file (a named pipe)"}}`
	for _, method := range []string{"GET", "PUT"} {
		if r := promptly(method, "/v1/sessions/a/files/p", "into the pipe"); r.status != 400 || r.body != refused {
			t.Errorf("%s of a named pipe: %d %s, want 400 %s", method, r.status, r.body, refused)
		}
	}
	// With a reader at the other end, PUT still writes nothing into it.
	reader, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if r := promptly("PUT", "/v1/sessions/a/files/p", "into the pipe"); r.status != 400 || r.body != refused {
		t.Errorf("PUT of a read named pipe: %d %s, want 400 %s", r.status, r.body, refused)
	}
	_ = reader.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	buf := make([]byte, 64)
	if n, _ := reader.Read(buf); n > 0 {
		t.Errorf("the pipe's reader got %q", buf[:n])
	}
	if info, err := os.Lstat(p); err != nil || info.Mode().Type() != os.ModeNamedPipe {
		t.Errorf("the pipe became %v, %v", info, err)
	}
	// A directory: no file to GET (404), none to PUT over (400), as before.
	if r := promptly("GET", "/v1/sessions/a/files/d", ""); r.status != 404 {
		t.Errorf("GET of a directory: %d %s, want 404", r.status, r.body)
	}
	if r := promptly("PUT", "/v1/sessions/a/files/d", "x"); r.status != 400 || !strings.Contains(r.body, `"code":"bad_request"`) {
		t.Errorf("PUT of a directory: %d %s, want 400 bad_request", r.status, r.body)
	}
	// The files beside the pipe are served as ever.
	if r := promptly("GET", "/v1/sessions/a/files/d/seed.txt", ""); r.status != 200 || r.body != "x" {
		t.Errorf("GET of a file beside the pipe: %d %s", r.status, r.body)
	}
}
