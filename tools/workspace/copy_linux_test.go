//go:build linux

package workspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tack-run/tack/tools/workspace"
)

// blocks returns the disk space dir's files take, in 512-byte blocks,
// each inode counted once.
func blocks(t *testing.T, dir string) int64 {
	t.Helper()
	seen := map[uint64]bool{}
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err == nil && !seen[st.Ino] {
			seen[st.Ino] = true
			n += st.Blocks
		}
		return nil
	})
	return n
}

// TestCopyTakesNoMoreDisk: a fork's copy of a workspace (as the server:
// root) wrote a sparse file's holes out and each hard link of a file as
// a file of its own: 1 MB on disk became 397 MB in a fork through tack
// serve, and `truncate -s 10T` then a fork filled the disk. Here: a
// 64 MiB hole with data in its middle and a 256 KiB file linked 64
// times; the copy holds the same bytes and takes about the disk of its
// source.
func TestCopyTakesNoMoreDisk(t *testing.T) {
	root := t.TempDir()
	ws := workspace.PerSession(root)
	src, err := ws.Make("a")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(src, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("middle"), 32<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	one := filepath.Join(src, "one")
	if err := os.WriteFile(one, []byte(strings.Repeat("y", 256<<10)), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 64 {
		if err := os.Link(one, filepath.Join(src, "h"+string(rune('A'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := ws.Copy("a", "b"); err != nil {
		t.Fatal(err)
	}
	dst, _ := ws.Path("b")
	s, d := blocks(t, src)*512, blocks(t, dst)*512
	t.Logf("source %d KiB on disk, copy %d KiB", s>>10, d>>10)
	if d > 2*s+1<<20 {
		t.Errorf("a fork's copy of a workspace of %d KiB on disk takes %d KiB", s>>10, d>>10)
	}
	for _, name := range []string{"sparse", "one", "hA", "hZ"} {
		a, _ := os.ReadFile(filepath.Join(src, name))
		b, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(a) != string(b) {
			t.Errorf("%s: the copy differs (%d bytes against %d): %v", name, len(b), len(a), err)
		}
	}
}
