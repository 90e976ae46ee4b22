package workspace_test

import (
	"context"
	"os"
	"path/filepath"
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
