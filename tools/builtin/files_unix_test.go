//go:build unix

package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tack-run/tack/tools"
)

// mkfifo makes a named pipe at p, as `mkfifo p` in a session's shell
// does, and returns a function that lets a call stuck opening it go:
// it opens the other end of the pipe, without waiting, for a moment.
func mkfifo(t *testing.T, p string) (release func()) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	release = func() {
		for _, flag := range []int{os.O_WRONLY, os.O_RDONLY} {
			if f, err := os.OpenFile(p, flag|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
	}
	t.Cleanup(release)
	return release
}

// callPromptly runs one call like call, and fails the test unless it
// answers within 5 s (release then lets the stuck call go).
func callPromptly(t *testing.T, set *tools.Set, name string, args any, release func()) tools.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Validate(name, raw); err != nil {
		t.Fatal(err)
	}
	tool, _ := set.Get(name)
	done := make(chan tools.Result, 1)
	go func() { done <- tools.Execute(context.Background(), tool, raw, nil) }()
	select {
	case res := <-done:
		return res
	case <-time.After(5 * time.Second):
		release()
		t.Fatalf("%s %s: no result in 5 s (blocked on a named pipe)", name, raw)
		return tools.Result{}
	}
}

// TestFileToolsRefuseNamedPipes: read_file, list_files and write_file of
// a named pipe in the workspace answer an error result at once. They
// opened it as a file: open(2) waited for a writer (a reader) for ever,
// and an abort left the OS thread blocked; a turn of 10,000 such calls
// made `tack serve` die of thread exhaustion.
func TestFileToolsRefuseNamedPipes(t *testing.T) {
	root, set := fileFixture(t)
	p := filepath.Join(root, "p")
	release := mkfifo(t, p)
	const refused = `"p" is not a regular file (a named pipe)`
	for _, c := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"read", "read_file", map[string]any{"path": "p"}, refused},
		{"read by absolute path", "read_file", map[string]any{"path": p}, `"` + p + `" is not a regular file (a named pipe)`},
		{"list", "list_files", map[string]any{"path": "p"}, refused},
		{"write", "write_file", map[string]any{"path": "p", "content": "x"}, refused},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := callPromptly(t, set, c.tool, c.args, release)
			if want := (tools.Result{Content: c.want, IsError: true}); got != want {
				t.Errorf("%s %v = %+v, want %+v", c.tool, c.args, got, want)
			}
		})
	}
	if info, err := os.Lstat(p); err != nil || info.Mode().Type() != os.ModeNamedPipe {
		t.Errorf("the pipe became %v, %v", info, err)
	}
	// The file tools still work beside it.
	if got := callPromptly(t, set, "write_file", map[string]any{"path": "b.txt", "content": "ok"}, release); got.IsError {
		t.Errorf("write_file of a file beside the pipe: %+v", got)
	}
	if got := callPromptly(t, set, "read_file", map[string]any{"path": "b.txt"}, release); got != (tools.Result{Content: "ok"}) {
		t.Errorf("read_file of a file beside the pipe: %+v", got)
	}
}

// TestWriteFileIntoAReadPipe: write_file never writes into a named pipe,
// even one a process reads (the session's shell, waiting for what comes):
// the content would go to that process instead of a file.
func TestWriteFileIntoAReadPipe(t *testing.T) {
	root, set := fileFixture(t)
	p := filepath.Join(root, "p")
	release := mkfifo(t, p)
	reader, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	got := callPromptly(t, set, "write_file", map[string]any{"path": "p", "content": "into the pipe"}, release)
	if want := (tools.Result{Content: `"p" is not a regular file (a named pipe)`, IsError: true}); got != want {
		t.Errorf("write_file = %+v, want %+v", got, want)
	}
	_ = reader.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	buf := make([]byte, 64)
	if n, _ := reader.Read(buf); n > 0 {
		t.Errorf("the pipe's reader got %q", buf[:n])
	}
}
