//go:build linux

package http

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/tools/workspace"
)

// TestFilesListStaysInTheWorkspace: the session's shell can swap a
// directory for a symbolic link to anywhere on the host (renameat2
// RENAME_EXCHANGE, in a loop) between the listing of its parent, which
// says "directory", and the walk into it. GET /v1/sessions/{id}/files
// walked with filepath.WalkDir, by path, which then followed the link:
// it listed the host directory (another user's workspace, the server's
// data) with names, sizes and times, or failed with a 500 naming a file
// found there. Here the test swaps, as the session's shell would.
func TestFilesListStaysInTheWorkspace(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "workspaces")
	outside := filepath.Join(base, "server-data")
	if err := os.MkdirAll(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "outside-secret.json"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := startWith(t, nil, []tack.Option{tack.WithWorkspaces(workspace.PerSession(root))}, WithAuth(testAuth(t)))
	ts.must("POST", "/v1/sessions", aliceToken, `{"session":"a","script":{"turns":[{"text":"x"}]}}`, 201)
	ts.must("PUT", "/v1/sessions/a/files/d/seed.txt", aliceToken, "x", 201)
	ws := filepath.Join(root, "a")
	if err := os.Symlink(outside, filepath.Join(ws, "l")); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		d, l := filepath.Join(ws, "d"), filepath.Join(ws, "l")
		for i := 0; !stop.Load(); i++ {
			if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, l, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("renameat2: %v", err)
				return
			}
			if i%4 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	defer func() { stop.Store(true); <-swapped }()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		r := ts.do("GET", "/v1/sessions/a/files", aliceToken, "")
		if strings.Contains(r.body, "outside-secret") || strings.Contains(r.body, base) {
			t.Fatalf("the files list shows what is outside the workspace: %d %s", r.status, r.body)
		}
	}
}
