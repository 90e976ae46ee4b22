package workspace_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/workspace"
)

// TestPerSession: a session's directory is named after its id, a
// sub-agent's after its root session's; bad ids name none; Remove takes
// the directory away, and a sub-agent's id removes nothing.
func TestPerSession(t *testing.T) {
	root := t.TempDir()
	ws := workspace.PerSession(root)
	tests := []struct {
		id, want string
		bad      bool
	}{
		{id: "s-1", want: "s-1"},
		{id: "s-1/sub-1", want: "s-1"},
		{id: "s-1/sub-1/sub-2", want: "s-1"},
		{id: "a@b:c.d_e", want: "a@b:c.d_e"},
		{id: "..", bad: true},
		{id: "/sub-1", bad: true},
		{id: "", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			dir, err := ws.Dir(tools.WithSession(context.Background(), tt.id))
			if tt.bad {
				if err == nil {
					t.Fatalf("Dir(%q) = %s, want an error", tt.id, dir)
				}
				return
			}
			if err != nil || dir != filepath.Join(root, tt.want) {
				t.Fatalf("Dir(%q) = %s, %v; want %s", tt.id, dir, err, tt.want)
			}
			if info, err := os.Stat(dir); err != nil || !info.IsDir() {
				t.Fatalf("%s not made: %v", dir, err)
			}
		})
	}
	if err := ws.Remove("s-1/sub-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "s-1")); err != nil {
		t.Fatalf("a sub-agent's Remove removed its parent's workspace: %v", err)
	}
	if err := ws.Remove("s-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "s-1")); !os.IsNotExist(err) {
		t.Fatalf("s-1 still there after Remove: %v", err)
	}
}

// TestShared: every session, and a call of none, works in the one
// directory, which Remove and Copy leave alone.
func TestShared(t *testing.T) {
	dir := t.TempDir()
	ws := workspace.Shared(dir)
	for _, id := range []string{"", "a", "b/sub-1"} {
		if got, err := ws.Dir(tools.WithSession(context.Background(), id)); err != nil || got != dir {
			t.Fatalf("Dir(%q) = %s, %v; want %s", id, got, err, dir)
		}
	}
	if err := ws.Remove("a"); err != nil || ws.Copy("a", "b") != nil {
		t.Fatal("Remove or Copy failed on a shared directory")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}

// TestCopy copies files, directories and links as they are; a source
// without a workspace gives none.
func TestCopy(t *testing.T) {
	root := t.TempDir()
	ws := workspace.PerSession(root)
	src, err := ws.Make("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(src, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "d", "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	if err := ws.Copy("a", "b"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "b", "d", "f")); err != nil || string(b) != "x" {
		t.Fatalf("copied file: %q, %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(root, "b", "link")); err != nil || l != "/etc/passwd" {
		t.Fatalf("copied link: %q, %v", l, err)
	}
	if err := ws.Copy("none", "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "c")); !os.IsNotExist(err) {
		t.Fatalf("a copy of no workspace made one: %v", err)
	}
}

// TestSourceStaysItsSessions: a Source copies the workspace it opened,
// even when its session is deleted and a new session of the same id (a
// second user's) has made one before the copy: the copy then has none
// of the new session's files.
func TestSourceStaysItsSessions(t *testing.T) {
	root := t.TempDir()
	ws := workspace.PerSession(root)
	dir, err := ws.Make("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := ws.OpenSource("a")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := ws.Remove("a"); err != nil {
		t.Fatal(err)
	}
	if dir, err = ws.Make("a"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "theirs"), []byte("y"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := src.Stage()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Discard()
	if err := st.Place("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "b", "theirs")); !os.IsNotExist(err) {
		t.Fatalf("the copy has the new session's file: %v", err)
	}
}

// TestCopyOfADeepWorkspace: a copy goes copyDepth (256) directories
// deep, and refuses a deeper workspace with an error that says so: it
// holds two descriptors a level, and a chain of directories is a
// second's work for a shell.
func TestCopyOfADeepWorkspace(t *testing.T) {
	root := t.TempDir()
	ws := workspace.PerSession(root)
	for _, c := range []struct {
		id    string
		depth int
		fails bool
	}{{"deep", 255, false}, {"deeper", 257, true}} {
		dir, err := ws.Make(c.id)
		if err != nil {
			t.Fatal(err)
		}
		chain := filepath.Join(dir, strings.Repeat("d/", c.depth))
		if err := os.MkdirAll(chain, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(chain, "f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		err = ws.Copy(c.id, c.id+"-fork")
		if c.fails {
			if err == nil || !strings.Contains(err.Error(), "more than 256 directories deep") {
				t.Fatalf("copy of %d levels: %v, want the depth refused", c.depth, err)
			}
			if left, _ := filepath.Glob(filepath.Join(root, "fork+*")); len(left) != 0 {
				t.Fatalf("after the failed copy: %q staged still", left)
			}
			continue
		}
		if err != nil {
			t.Fatalf("copy of %d levels: %v", c.depth, err)
		}
		copied := filepath.Join(root, c.id+"-fork", strings.Repeat("d/", c.depth), "f")
		if b, err := os.ReadFile(copied); err != nil || string(b) != "x" {
			t.Fatalf("the deepest file: %q, %v", b, err)
		}
	}
}

// TestCopyReadsNothingOutside: a fork copies its parent's workspace while
// the parent's session may run (a shell of its own swapping a file and a
// directory for links to another workspace as fast as it can); no copy
// ever holds what a link points at outside the parent's workspace. Copy
// opened by path what the walk had seen as a file or a directory, which
// followed a link swapped in between: another user's secret reached the
// fork as a regular file within a few hundred forks.
func TestCopyReadsNothingOutside(t *testing.T) {
	ws := workspace.PerSession(t.TempDir())
	alice, err := ws.Make("alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(alice, "secret"), []byte("alice's secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	bob, err := ws.Make("bob")
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	swapping := make(chan struct{})
	go func() {
		defer close(swapping)
		f, d := filepath.Join(bob, "f"), filepath.Join(bob, "d")
		for !stop.Load() {
			_ = os.Remove(f)
			_ = os.WriteFile(f, []byte("bob's"), 0o644)
			_ = os.RemoveAll(d)
			_ = os.Mkdir(d, 0o755)
			_ = os.Remove(f)
			_ = os.Symlink(filepath.Join(alice, "secret"), f)
			_ = os.Remove(d)
			_ = os.Symlink(alice, d)
		}
	}()
	defer func() { stop.Store(true); <-swapping }()
	for i := 0; i < 1000; i++ {
		fork := fmt.Sprintf("fork-%d", i)
		_ = ws.Copy("bob", fork) // may fail as things change under it
		dir, _ := ws.Path(fork)
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if b, _ := os.ReadFile(p); string(b) == "alice's secret" {
					t.Fatalf("fork %d holds alice's secret as a file of its own: %s", i, p)
				}
			}
			return nil
		})
		if err := ws.Remove(fork); err != nil {
			t.Fatal(err)
		}
	}
}
