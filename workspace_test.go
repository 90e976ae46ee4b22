package tack_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/tools/workspace"
)

// TestWorkspacesPerSession: each session's file tools and shell work in a
// directory of its own, made on first use; a fork starts with a copy of
// its parent's, which each then changes alone.
func TestWorkspacesPerSession(t *testing.T) {
	root := filepath.Join(t.TempDir(), "workspaces")
	rt, err := tack.New(tack.WithWorkspaces(workspace.PerSession(root)))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	write := func(name, content string) string {
		return `{"turns":[{"tool_calls":[{"name":"write_file","args":{"path":"` + name + `","content":"` + content + `"}},` +
			`{"name":"shell","args":{"command":"echo from-shell > shell.txt"}}]},{"text":"done"}]}`
	}
	tools := []string{"write_file", "read_file", "list_files"}
	for _, id := range []string{"a", "b"} {
		if _, err := rt.Spawn(tack.SessionConfig{ID: id, Tools: tools, Script: json.RawMessage(write(id+".txt", id))}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(root); err == nil {
		t.Fatalf("%s exists before any tool ran", root)
	}
	promptAndWait(t, rt, "a", "go", "r-1")
	promptAndWait(t, rt, "b", "go", "r-1")
	want := map[string][]string{"a": {"a.txt", "shell.txt"}, "b": {"b.txt", "shell.txt"}}
	for id, names := range want {
		assertFiles(t, filepath.Join(root, id), names...)
	}
	s, err := rt.Session("a")
	if err != nil {
		t.Fatal(err)
	}
	fork, err := s.Fork(t.Context(), 0, "a2")
	if err != nil {
		t.Fatal(err)
	}
	assertFiles(t, filepath.Join(root, fork.ID()), "a.txt", "shell.txt")
	if err := os.WriteFile(filepath.Join(root, "a2", "only-fork.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	assertFiles(t, filepath.Join(root, "a"), "a.txt", "shell.txt")

	// A fork whose workspace cannot be copied (deeper than a copy goes)
	// fails, and leaves no session behind.
	if err := os.MkdirAll(filepath.Join(root, "b", strings.Repeat("d/", 300)), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := rt.Session("b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Fork(t.Context(), 0, "b2"); tack.Code(err) != events.CodeInternal || !strings.Contains(err.Error(), "directories deep") {
		t.Fatalf("fork of a too deep workspace: %v, want internal_error saying so", err)
	}
	if _, err := rt.Session("b2"); tack.Code(err) != events.CodeInvalidSession {
		t.Fatalf("the failed fork: %v, want no such session", err)
	}
	if _, err := os.Stat(filepath.Join(root, "b2")); !os.IsNotExist(err) {
		t.Fatalf("the failed fork's workspace: %v, want none", err)
	}

	// Deleting a session removes its workspace, and only its own.
	if err := rt.Delete(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "a")); !os.IsNotExist(err) {
		t.Fatalf("the deleted session's workspace: %v, want it gone", err)
	}
	assertFiles(t, filepath.Join(root, "a2"), "a.txt", "only-fork.txt", "shell.txt")
}

// assertFiles fails unless dir holds exactly names.
func assertFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if len(got) != len(names) {
		t.Fatalf("%s holds %v, want %v", dir, got, names)
	}
	for i := range got {
		if got[i] != names[i] {
			t.Fatalf("%s holds %v, want %v", dir, got, names)
		}
	}
}

// TestForkCopiesBeforeItTakesItsID: a fork copies its parent's workspace
// before its session exists, so a session made under the fork's id while
// a slow copy runs (another user's) keeps its id and its own files: the
// fork fails (bad_request: the session exists). Before, the fork's session was made
// first; closed during the copy (without a store its id is free then)
// its id went to another user's session, which the fork then closed.
func TestForkCopiesBeforeItTakesItsID(t *testing.T) {
	root := filepath.Join(t.TempDir(), "workspaces")
	rt, err := tack.New(tack.WithWorkspaces(workspace.PerSession(root)))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	p, err := rt.Spawn(tack.SessionConfig{ID: "p", Script: json.RawMessage(`{"turns":[{"text":"hi"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := rt.Workspaces().Make("p")
	if err != nil {
		t.Fatal(err)
	}
	// A file of many small extents, slow to copy.
	f, err := os.Create(filepath.Join(dir, "big"))
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 200_000; i++ {
		if _, err := f.WriteAt([]byte{1}, i*16384); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	forked := make(chan error, 1)
	go func() { _, err := p.Fork(t.Context(), 0, "f"); forked <- err }()
	eventually.Within(t, 10*time.Second, func() error {
		if staged, _ := filepath.Glob(filepath.Join(root, "fork+*")); len(staged) == 0 {
			return errors.New("no copy under way")
		}
		return nil
	})
	if _, err := rt.Spawn(tack.SessionConfig{ID: "f", Script: json.RawMessage(`{"turns":[{"text":"mine"}]}`)}); err != nil {
		t.Fatalf("a session made under the fork's id while it copies: %v", err)
	}
	if err := <-forked; tack.Code(err) != events.CodeBadRequest || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("the fork: %v, want bad_request: the session exists", err)
	}
	if _, err := rt.Session("f"); err != nil {
		t.Fatalf("the session made meanwhile: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "f", "big")); !os.IsNotExist(err) {
		t.Fatalf("the session made meanwhile has the fork's files: %v", err)
	}
	if staged, _ := filepath.Glob(filepath.Join(root, "fork+*")); len(staged) != 0 {
		t.Fatalf("left staged: %q", staged)
	}
}
