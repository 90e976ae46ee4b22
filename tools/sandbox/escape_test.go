package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tack-run/tack/tools/sandbox"
)

// dirOutsideTmp makes a directory named after prefix that is not under
// /tmp or /var/tmp (the sandbox mounts its own there, hiding the host's):
// in the package's directory, or, where the checkout itself lies under
// /tmp (a CI clone may), in the home or cache directory. It is removed
// when the test ends.
func dirOutsideTmp(t *testing.T, prefix string) string {
	t.Helper()
	var bases []string
	for _, f := range []func() (string, error){os.Getwd, os.UserHomeDir, os.UserCacheDir} {
		if b, err := f(); err == nil {
			bases = append(bases, b)
		}
	}
	for _, b := range bases {
		if underTmp(b) {
			continue
		}
		dir, err := os.MkdirTemp(b, prefix)
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	t.Fatalf("no directory outside /tmp and /var/tmp to make %s* in (tried %q)", prefix, bases)
	return ""
}

// underTmp reports whether dir is /tmp, /var/tmp or below them.
func underTmp(dir string) bool {
	for _, tmp := range []string{"/tmp", "/var/tmp"} {
		if dir == tmp || strings.HasPrefix(dir, tmp+"/") {
			return true
		}
	}
	return false
}

// requireSandbox skips nothing: where the sandbox cannot be had it checks
// that Command refuses with "sandbox unavailable:" and ends the test, and
// under CI (CI=true), where the sandbox must be had, it fails.
func requireSandbox(t *testing.T) bool {
	t.Helper()
	err := sandbox.Available()
	if err == nil {
		return true
	}
	if !strings.HasPrefix(err.Error(), "sandbox unavailable:") {
		t.Fatalf("Available: %v, want an error beginning \"sandbox unavailable:\"", err)
	}
	if os.Getenv("CI") != "" && runtime.GOOS == "linux" {
		t.Fatalf("CI must run the escape tests, but: %v", err)
	}
	if _, _, cerr := sandbox.New(sandbox.Config{}).Command(t.Context(), t.TempDir(), "true"); cerr == nil || cerr.Error() != err.Error() {
		t.Fatalf("Command without a sandbox: %v, want %v", cerr, err)
	}
	t.Logf("NO SANDBOX HERE, only its refusal was tested: %v", err)
	return false
}

// run runs line in sb with workspace dir and returns its combined output.
func run(t *testing.T, sb *sandbox.Sandbox, dir, line string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd, done, err := sb.Command(ctx, dir, line)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	done()
	if ctx.Err() != nil {
		t.Fatalf("%q did not end: %s", line, out)
	}
	return string(out), err
}

// workspaceDir makes a workspace the sandbox's user may write, as
// workspace.Workspaces.OwnedBy does for the server.
func workspaceDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if uid, gid := sandbox.Owner(); uid >= 0 {
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestEscapes tries to get out of the sandbox; every try must fail, and
// this process (the server) must not notice.
func TestEscapes(t *testing.T) {
	if !requireSandbox(t) {
		return
	}
	const secret = "s3cr3t-d0-not-leak"
	t.Setenv("TACK_TEST_SECRET", secret)
	outside := t.TempDir()
	secrets := t.TempDir()
	for _, f := range []string{"auth.json", "tack.db"} {
		if err := os.WriteFile(filepath.Join(secrets, f), []byte(secret), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A system directory holding a denied file, as /etc/tack/auth.json
	// would be: it is shown, the file is not.
	// World-writable: only Landlock keeps the command from writing. Not
	// under /tmp, which is the sandbox's own.
	system := dirOutsideTmp(t, "system-")
	if err := os.Chmod(system, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(system, "auth.json"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(system, "motd"), []byte("public"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := workspaceDir(t)
	// A config file in the workspace (tack rpc's working directory).
	if err := os.WriteFile(filepath.Join(ws, "tack.json"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secrets, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	other := workspaceDir(t) // another session's workspace
	if err := os.WriteFile(filepath.Join(other, "theirs.txt"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	sb := sandbox.New(sandbox.Config{
		System: append(append([]string(nil), sandbox.DefaultSystem...), system),
		Deny:   []string{filepath.Join(system, "auth.json"), filepath.Join(ws, "tack.json"), secrets, filepath.Dir(other)},
	})
	tests := []struct {
		name, line string
		// check fails the test if the escape worked.
		check func(t *testing.T, out string)
	}{
		{"write outside", "echo x > " + outside + "/pwned; echo x > /etc/pwned; echo x > /usr/pwned; echo x > ../pwned; echo x > " + system + "/pwned", func(t *testing.T, out string) {
			for _, p := range []string{filepath.Join(outside, "pwned"), filepath.Join(system, "pwned"), "/etc/pwned", "/usr/pwned", filepath.Join(filepath.Dir(ws), "pwned")} {
				if _, err := os.Stat(p); err == nil {
					os.Remove(p)
					t.Errorf("wrote %s", p)
				}
			}
		}},
		{"write in /tmp stays private", "echo x > /tmp/pwned-" + t.Name()[:4] + " && echo x > /var/tmp/pwned-tack && cat /tmp/pwned-" + t.Name()[:4], func(t *testing.T, out string) {
			if out != "x\n" {
				t.Errorf("the private /tmp does not work: %q", out)
			}
			for _, p := range []string{"/tmp/pwned-" + t.Name()[:4], "/var/tmp/pwned-tack"} {
				if _, err := os.Stat(p); err == nil {
					os.Remove(p)
					t.Errorf("%s appeared on the host", p)
				}
			}
		}},
		{"server environ", fmt.Sprintf("cat /proc/%d/environ; cat /proc/1/environ; env", os.Getpid()), noSecret(secret)},
		{"auth file and store", "cat " + filepath.Join(secrets, "auth.json") + " " + filepath.Join(secrets, "tack.db"), noSecret(secret)},
		{"denied file under a system directory", "cat " + filepath.Join(system, "auth.json") + "; cat " + filepath.Join(system, "motd"), func(t *testing.T, out string) {
			noSecret(secret)(t, out)
			if !strings.Contains(out, "public") {
				t.Errorf("the system directory is not shown: %q", out)
			}
		}},
		{"denied file in the workspace", "cat tack.json", noSecret(secret)},
		{"dot-dot", "cat ../../../../../../" + secrets + "/auth.json; ls -la ..", noSecret(secret)},
		{"symbolic link out", "cat out/auth.json; ln -s " + secrets + " out2 && cat out2/tack.db", noSecret(secret)},
		{"another workspace", "cat " + filepath.Join(other, "theirs.txt"), noSecret(secret)},
		{"loopback port", fmt.Sprintf("bash -c 'echo hi > /dev/tcp/127.0.0.1/%d' && echo connected", port), func(t *testing.T, out string) {
			if strings.Contains(out, "connected") || len(accepted) > 0 {
				t.Errorf("reached the test's port: %q", out)
			}
		}},
		{"privilege", "id -u; cat /proc/self/status | grep CapEff", func(t *testing.T, out string) {
			if os.Geteuid() == 0 && !strings.HasPrefix(out, "65534\n") {
				t.Errorf("runs as %q, want 65534", out)
			}
			if !strings.Contains(out, "CapEff:\t0000000000000000") {
				t.Errorf("capabilities left: %q", out)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := run(t, sb, ws, tt.line)
			tt.check(t, out)
		})
	}
	// The workspace itself is writable, and what is written there is the
	// host's.
	if out, err := run(t, sb, ws, "echo mine > mine.txt && pwd"); err != nil || out != sandbox.Mount+"\n" {
		t.Fatalf("writing in the workspace: %q, %v", out, err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "mine.txt")); err != nil || string(b) != "mine\n" {
		t.Fatalf("the workspace's file: %q, %v", b, err)
	}
}

func noSecret(secret string) func(t *testing.T, out string) {
	return func(t *testing.T, out string) {
		t.Helper()
		if strings.Contains(out, secret) {
			t.Errorf("the secret leaked: %q", out)
		}
	}
}

// TestNetworkFlag: with Network the same connection goes through.
func TestNetworkFlag(t *testing.T) {
	if !requireSandbox(t) {
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	line := fmt.Sprintf("bash -c 'echo hi > /dev/tcp/127.0.0.1/%d' && echo connected", ln.Addr().(*net.TCPAddr).Port)
	if out, err := run(t, sandbox.New(sandbox.Config{Network: true}), workspaceDir(t), line); err != nil || out != "connected\n" {
		t.Fatalf("with Network: %q, %v", out, err)
	}
}

// TestEnvironment: the command gets PATH, HOME, TMPDIR, LANG and the
// names passed, nothing else of the server's.
func TestEnvironment(t *testing.T) {
	if !requireSandbox(t) {
		return
	}
	t.Setenv("TACK_PASSED", "yes")
	t.Setenv("TACK_KEPT_BACK", "no")
	t.Setenv("LANG", "C.UTF-8")
	out, err := run(t, sandbox.New(sandbox.Config{Env: []string{"TACK_PASSED", "TACK_UNSET"}}), workspaceDir(t), "env | sort")
	want := "HOME=/workspace\nLANG=C.UTF-8\nPATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin\nPWD=/workspace\nTACK_PASSED=yes\nTMPDIR=/tmp\n"
	if err != nil || out != want {
		t.Fatalf("environment:\n%s%v\nwant:\n%s", out, err, want)
	}
}
