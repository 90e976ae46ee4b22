package sandbox_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/tack-run/tack/tools/sandbox"
)

// BenchmarkCall measures what one shell call costs, start to exit, for
// `sh -c true`: unsandboxed, in this package's sandbox, and in
// bubblewrap with a comparable setup (when bwrap is installed):
//
//	go test -run '^$' -bench Call -benchtime 200x ./tools/sandbox/
func BenchmarkCall(b *testing.B) {
	dir := b.TempDir()
	if uid, gid := sandbox.Owner(); uid >= 0 {
		if err := os.Chown(dir, uid, gid); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("sh", "-c", "true")
			cmd.Dir = dir
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sandbox", func(b *testing.B) {
		if err := sandbox.Available(); err != nil {
			b.Skip(err)
		}
		sb := sandbox.New(sandbox.Config{})
		for b.Loop() {
			cmd, done, err := sb.Command(b.Context(), dir, "true")
			if err != nil {
				b.Fatal(err)
			}
			err = cmd.Run()
			done()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bwrap", func(b *testing.B) {
		bwrap, err := exec.LookPath("bwrap")
		if err != nil {
			b.Skip("bubblewrap is not installed")
		}
		args := []string{"--unshare-all", "--die-with-parent", "--new-session",
			"--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
			"--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
			"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", dir, "/workspace",
			"--chdir", "/workspace", "--uid", "65534", "--gid", "65534", "--cap-drop", "ALL",
			"sh", "-c", "true"}
		for b.Loop() {
			if out, err := exec.Command(bwrap, args...).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}
