//go:build unix

package workspace_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tack-run/tack/tools/workspace"
)

// mkfifo makes a named pipe at p, as `mkfifo p` in a session's shell
// does. A call stuck opening it is let go when the test ends.
func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { release(p) })
}

// release opens both ends of the named pipe p for a moment, without
// waiting, so that an open(2) stuck on it returns.
func release(p string) {
	for _, flag := range []int{os.O_WRONLY, os.O_RDONLY} {
		if f, err := os.OpenFile(p, flag|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
}

// promptly returns f's error, failing the test unless f returns within
// 5 s; stuck names the pipe to release then.
func promptly(t *testing.T, stuck string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		release(stuck)
		t.Fatalf("no answer in 5 s: blocked on the named pipe %s", stuck)
		return nil
	}
}

// TestOpenRefusesNamedPipes: Open and Create answer a named pipe at once
// with a *NotRegularError, with or without a process at its other end;
// they open regular files (Open directories too) as root.Open and
// root.OpenFile do, blocking as usual.
func TestOpenRefusesNamedPipes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p")
	mkfifo(t, p)
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("old content"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	const want = `"p" is not a regular file (a named pipe)`
	check := func(what string, err error) {
		t.Helper()
		var nr *workspace.NotRegularError
		if !errors.As(err, &nr) || err.Error() != want {
			t.Errorf("%s: %v, want %s", what, err, want)
		}
	}
	open := func() error {
		f, err := workspace.Open(root, "p")
		if err == nil {
			f.Close()
		}
		return err
	}
	create := func() error {
		f, err := workspace.Create(root, "p", 0o644)
		if err == nil {
			f.Close()
		}
		return err
	}
	check("Open, no writer", promptly(t, p, open))
	check("Create, no reader", promptly(t, p, create))
	other, err := os.OpenFile(p, os.O_RDWR, 0) // both ends (Linux opens a pipe so without waiting)
	if err != nil {
		t.Fatal(err)
	}
	check("Open, a writer", promptly(t, p, open))
	check("Create, a reader", promptly(t, p, create))
	other.Close()

	f, err := workspace.Create(root, "f", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	assertBlocking(t, f)
	if _, err := f.WriteString("new"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	f, err = workspace.Open(root, "f")
	if err != nil {
		t.Fatal(err)
	}
	assertBlocking(t, f)
	if b, err := io.ReadAll(f); err != nil || string(b) != "new" {
		t.Errorf("the file holds %q, %v; want it truncated and rewritten", b, err)
	}
	f.Close()
	if f, err = workspace.Create(root, "new", 0o600); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if info, err := os.Stat(filepath.Join(dir, "new")); err != nil || info.Mode() != 0o600 {
		t.Errorf("a new file: %v, %v", info, err)
	}
	if f, err = workspace.Open(root, "d"); err != nil {
		t.Fatalf("Open of a directory: %v", err)
	}
	f.Close()
	if _, err := workspace.Create(root, "d", 0o644); !errors.Is(err, syscall.EISDIR) {
		t.Errorf("Create of a directory: %v, want EISDIR", err)
	}
}

// assertBlocking fails unless f is in blocking mode.
func assertBlocking(t *testing.T, f *os.File) {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	if err := rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		t.Fatal(err)
	}
	if err != nil || flags&unix.O_NONBLOCK != 0 {
		t.Errorf("%s: flags %#x, %v: still O_NONBLOCK", f.Name(), flags, err)
	}
}

// TestCopySkipsNamedPipes: a fork copies its parent's workspace but for
// its named pipes, and does not hang on one, even when a file becomes a
// pipe between the walk's listing and its opening (the parent's shell
// can swap them as the fork runs): the copy opened the file by name and
// waited for a writer for ever.
func TestCopySkipsNamedPipes(t *testing.T) {
	ws := workspace.PerSession(t.TempDir())
	src, err := ws.Make("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "kept"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, filepath.Join(src, "p"))
	if err := promptly(t, filepath.Join(src, "p"), func() error { return ws.Copy("a", "b") }); err != nil {
		t.Fatal(err)
	}
	dst, _ := ws.Path("b")
	if b, err := os.ReadFile(filepath.Join(dst, "kept")); err != nil || string(b) != "x" {
		t.Errorf("copied file: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "p")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the pipe was copied: %v", err)
	}

	// f is a regular file and a named pipe by turns, each renamed over
	// it in one step.
	f := filepath.Join(src, "f")
	var stop atomic.Bool
	swapping := make(chan struct{})
	go func() {
		defer close(swapping)
		reg, pipe := filepath.Join(src, "f.reg"), filepath.Join(src, "f.pipe")
		for !stop.Load() {
			_ = os.WriteFile(reg, []byte("file"), 0o644)
			_ = os.Rename(reg, f)
			_ = syscall.Mkfifo(pipe, 0o644)
			_ = os.Rename(pipe, f)
		}
	}()
	defer func() { stop.Store(true); <-swapping }()
	for i := range 1000 {
		fork := fmt.Sprintf("fork-%d", i)
		_ = promptly(t, f, func() error { return ws.Copy("a", fork) }) // may fail as things change under it
		if err := ws.Remove(fork); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCopyDirectorySwapped: a directory d of the source is, by turns, a
// directory, a named pipe and a link to the workspace itself, each renamed
// over it in one step, while forks copy it. Each copy ends promptly: the
// pipe is not waited on (fs.WalkDir opened a directory it had listed with
// a plain open(2), which waited for ever on the pipe, from the first or
// second fork), and the link, met where a directory was listed, is not
// walked round and round.
func TestCopyDirectorySwapped(t *testing.T) {
	ws := workspace.PerSession(t.TempDir())
	src, err := ws.Make("a")
	if err != nil {
		t.Fatal(err)
	}
	// The spares wait outside the workspace, so that a listing sees d or
	// nothing.
	d, spare := filepath.Join(src, "d"), t.TempDir()
	dir, pipe, link := filepath.Join(spare, "dir"), filepath.Join(spare, "pipe"), filepath.Join(spare, "link")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, pipe)
	if err := os.Symlink(".", link); err != nil { // as d: the workspace itself
		t.Fatal(err)
	}
	t.Cleanup(func() { release(d) })
	var stop atomic.Bool
	swapping := make(chan struct{})
	go func() {
		defer close(swapping)
		for !stop.Load() {
			for _, p := range []string{dir, pipe, link} {
				_ = os.Rename(p, d)
				_ = os.Rename(d, p)
			}
		}
	}()
	defer func() { stop.Store(true); <-swapping }()
	for i := range 300 {
		fork := fmt.Sprintf("fork-%d", i)
		_ = promptly(t, d, func() error { return ws.Copy("a", fork) }) // may fail as things change under it
		if err := ws.Remove(fork); err != nil {
			t.Fatal(err)
		}
	}
}
