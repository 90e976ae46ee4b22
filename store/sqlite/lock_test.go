package sqlite_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/sqlite"
)

// helperEnv names the database a re-executed test binary opens (see
// TestMain).
const helperEnv = "TACK_SQLITE_LOCK_HELPER"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		os.Exit(lockHelper(path))
	}
	os.Exit(m.Run())
}

// lockHelper is the second process: it opens path and reports "locked: ..."
// or "opened"; once opened it commits a message, reports "committed" and
// holds the database until stdin closes (or it is killed).
func lockHelper(path string) int {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if errors.Is(err, store.ErrLocked) {
		fmt.Println("locked:", err)
		return 0
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("opened")
	err = st.Apply(ctx, "s1", &store.Batch{Messages: []*eventsv1.Message{{Role: "user", Content: "from the child"}}, State: "running"})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("committed")
	bufio.NewReader(os.Stdin).ReadString('\n')
	st.Close()
	return 0
}

// child starts the helper on path and returns it with its output lines.
func child(t *testing.T, path string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, bufio.NewScanner(out)
}

func line(t *testing.T, sc *bufio.Scanner) string {
	t.Helper()
	if !sc.Scan() {
		t.Fatalf("child output ended: %v", sc.Err())
	}
	return sc.Text()
}

func TestSecondOpenInProcessIsLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tack.db")
	first := openAt(t, path)
	_, err := sqlite.Open(t.Context(), path)
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, fmt.Sprint(os.Getpid())) {
		t.Fatalf("ErrLocked message %q should name the file and the holder's pid", msg)
	}
	t.Logf("second open: %v", err)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	openAt(t, path) // free again
}

func TestOtherProcessIsLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tack.db")
	st := openAt(t, path)
	_, out := child(t, path)
	got := line(t, out)
	if !strings.HasPrefix(got, "locked:") || !strings.Contains(got, fmt.Sprint(os.Getpid())) {
		t.Fatalf("child: %q, want a locked error naming pid %d", got, os.Getpid())
	}
	if err := st.Create(t.Context(), "still-writable", store.Config{}); err != nil {
		t.Fatalf("the holder cannot write after the refused open: %v", err)
	}
}

func TestKilledHolderReleasesTheLockAndKeepsCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tack.db")
	setup := openAt(t, path)
	if err := setup.Create(t.Context(), "s1", store.Config{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	setup.Close()

	cmd, out := child(t, path)
	if got := line(t, out); got != "opened" {
		t.Fatalf("child: %q", got)
	}
	if got := line(t, out); got != "committed" {
		t.Fatalf("child: %q", got)
	}
	_, err := sqlite.Open(t.Context(), path)
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Open while the child holds the file: %v, want ErrLocked", err)
	}
	cmd.Process.Kill() // SIGKILL: no Close, no cleanup
	cmd.Wait()

	st := openAt(t, path)
	snap, err := st.Load(t.Context(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Messages) != 1 || snap.Messages[0].Content != "from the child" || snap.State != "running" {
		t.Fatalf("after the kill: %+v", snap)
	}
	checkIntegrity(t, st)
}
