package sqlite_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/sqlite"
)

// smallDisk mounts a tmpfs of size bytes and returns its directory,
// unmounted when t ends. Mounting needs root and a sandbox that allows
// it: elsewhere the test is skipped, and TestDiskFullMidBatch (which
// simulates a full disk with max_page_count) stands in for it.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): the max_page_count test covers a full disk", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// A real full disk (a 2 MiB tmpfs): the write that does not fit fails
// with a clear error and stores nothing of itself; the session is as it
// was and the file is sound; once space is freed the same batch lands.
func TestRealDiskFull(t *testing.T) {
	dir := smallDisk(t, "2m")
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 512<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	st := openAt(t, filepath.Join(dir, "tack.db"))
	ctx := t.Context()
	if err := st.Create(ctx, "s1", store.Config{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Apply(ctx, "s1", &store.Batch{Messages: []*eventsv1.Message{{Role: "user", Content: "kept"}}, State: "idle"}); err != nil {
		t.Fatal(err)
	}
	big := &store.Batch{From: 1, State: "running", Messages: []*eventsv1.Message{
		{Role: "assistant", Content: "small"}, {Role: "user", Content: strings.Repeat("x", 2<<20)}}}
	err := st.Apply(ctx, "s1", big)
	if err == nil || errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "full") {
		t.Fatalf("Apply on a full disk: %v, want a disk-full error", err)
	}
	t.Logf("full disk: %v", err)
	snap, err := st.Load(ctx, "s1")
	if err != nil || len(snap.Messages) != 1 || snap.State != "idle" {
		t.Fatalf("after the failed write: %+v, %v", snap, err)
	}
	checkIntegrity(t, st)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	big.Messages[1].Content = strings.Repeat("x", 256<<10)
	if err := st.Apply(ctx, "s1", big); err != nil {
		t.Fatalf("Apply once space is free: %v", err)
	}
	if snap, _ := st.Load(ctx, "s1"); len(snap.Messages) != 3 || snap.State != "running" {
		t.Fatalf("after the retry: %d messages, state %s", len(snap.Messages), snap.State)
	}
	checkIntegrity(t, st)
}

// A database whose directory cannot be written (a read-only mount, which
// even root cannot write) is refused at Open with a clear error; the file
// is left as it was and opens again once the directory is writable.
func TestReadOnlyDirectory(t *testing.T) {
	dir := smallDisk(t, "8m")
	path := filepath.Join(dir, "tack.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Create(t.Context(), "s1", store.Config{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	remount := func(flags uintptr) {
		t.Helper()
		if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|flags, ""); err != nil {
			t.Fatalf("remount: %v", err)
		}
	}
	remount(syscall.MS_RDONLY)
	if st, err := sqlite.Open(t.Context(), path); err == nil {
		st.Close()
		t.Fatal("Open in a read-only directory succeeded")
	} else {
		t.Logf("read-only directory: %v", err)
	}
	remount(0)
	st = openAt(t, path)
	if _, err := st.Get(t.Context(), "s1"); err != nil {
		t.Fatalf("the session after the directory is writable again: %v", err)
	}
	checkIntegrity(t, st)
}
