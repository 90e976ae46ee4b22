//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tack-run/tack/internal/eventually"
	"github.com/tack-run/tack/tools/sandbox"
)

// childRole, set in the environment, makes the test binary play the
// server in a child process (see the tests below).
const childRole = "TACK_SANDBOX_TEST_CHILD"

// openPTY returns a new pseudo-terminal's master and slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, m.Fd(), unix.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// TestNoControllingTerminal: a server started from a terminal (an
// operator's tack serve in the foreground, tack chat) must not give its
// sandboxed commands that terminal. They had it (a process group of
// their own, in the server's session, and /dev/tty shown with the ioctl
// right): where TIOCSTI is allowed (dev.tty.legacy_tiocsti=1) a command
// pushed characters into the terminal's input, which the shell the
// operator returns to ran, as the operator, outside any sandbox.
func TestNoControllingTerminal(t *testing.T) {
	if os.Getenv(childRole) == "tty" {
		terminalChild()
		return
	}
	if !requireSandbox(t) {
		return
	}
	master, slave := openPTY(t)
	defer master.Close()
	result := filepath.Join(t.TempDir(), "result")
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoControllingTerminal$")
	cmd.Env = append(os.Environ(), childRole+"=tty", "TACK_SANDBOX_TEST_RESULT="+result)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	go func() { // drain the terminal's output
		buf := make([]byte, 4096)
		for {
			if _, err := master.Read(buf); err != nil {
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the child did not end")
	}
	b, err := os.ReadFile(result)
	if err != nil {
		t.Fatalf("the child wrote no result: %v", err)
	}
	out := string(b)
	t.Logf("child: %s", out)
	if strings.Contains(out, "TTY-OPENED") {
		t.Errorf("a sandboxed command opened the server's controlling terminal (/dev/tty)")
	}
	if strings.Contains(out, "INJECTED-READ") {
		t.Errorf("a sandboxed command pushed input into the server's terminal with TIOCSTI: the operator's shell would run it outside the sandbox")
	}
}

// terminalChild is the server of the test above, with a terminal of
// its own: it runs one sandboxed command that tries the terminal, then
// reads what the terminal holds for it.
func terminalChild() {
	res := os.Getenv("TACK_SANDBOX_TEST_RESULT")
	var log bytes.Buffer
	defer func() { os.WriteFile(res, log.Bytes(), 0o644) }()
	dir, err := os.MkdirTemp("", "tack-tty-")
	if err != nil {
		fmt.Fprintf(&log, "mkdir: %v", err)
		return
	}
	defer os.RemoveAll(dir)
	if uid, gid := sandbox.Owner(); uid >= 0 {
		os.Chown(dir, uid, gid)
	}
	// Echo off, so that only injected input is in the queue.
	if tio, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil {
		tio.Lflag &^= unix.ECHO | unix.ICANON
		unix.IoctlSetTermios(0, unix.TCSETS, tio)
	}
	line := `if (exec 3<>/dev/tty) 2>/dev/null; then echo TTY-OPENED; fi; ` +
		`perl -e 'open(T, "+<", "/dev/tty") or exit 0; for (split //, "INJECTED\n") { ioctl(T, 0x5412, $_) or exit 0 } print "TIOCSTI-OK\n"'`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd, done, err := sandbox.New(sandbox.Config{}).Command(ctx, dir, line)
	if err != nil {
		fmt.Fprintf(&log, "command: %v", err)
		return
	}
	out, err := cmd.CombinedOutput()
	done()
	fmt.Fprintf(&log, "sandbox output: %q (%v)\n", out, err)
	unix.SetNonblock(0, true)
	buf := make([]byte, 256)
	time.Sleep(100 * time.Millisecond)
	if n, _ := unix.Read(0, buf); n > 0 && strings.Contains(string(buf[:n]), "INJECTED") {
		fmt.Fprintf(&log, "INJECTED-READ: the server's terminal gave it %q\n", buf[:n])
	}
}

// TestCommandsDieWithTheServer: a server that is killed (SIGKILL, the
// OOM killer, a crash) takes its sandboxed commands with it. The helper
// is started with Pdeathsig, but the kernel forgets it when the helper
// changes its user ids (to 65534, when the server is root) before it
// executes sh: the commands lived on as orphans of init, with no
// deadline, their processes and their workspace.
func TestCommandsDieWithTheServer(t *testing.T) {
	if os.Getenv(childRole) == "orphan" {
		dir := os.Getenv("TACK_SANDBOX_TEST_DIR")
		cmd, done, err := sandbox.New(sandbox.Config{}).Command(context.Background(), dir, "sleep 127.28; echo never")
		if err != nil {
			fmt.Println("command:", err)
			os.Exit(2)
		}
		if err := cmd.Start(); err != nil {
			fmt.Println("start:", err)
			os.Exit(2)
		}
		done()
		fmt.Println("started")
		cmd.Wait()
		os.Exit(0)
	}
	if !requireSandbox(t) {
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("the parent-death signal is cleared by the helper's setresuid, done only when the server is root")
	}
	dir := workspaceDir(t)
	server := exec.Command(os.Args[0], "-test.run=^TestCommandsDieWithTheServer$")
	server.Env = append(os.Environ(), childRole+"=orphan", "TACK_SANDBOX_TEST_DIR="+dir)
	var out bytes.Buffer
	server.Stdout = &out
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for find := func() []int { return sleepers("127.28") }; len(find()) == 0; {
		if time.Now().After(deadline) {
			server.Process.Kill()
			t.Fatalf("the command never started: %s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	server.Process.Kill() // the server dies
	server.Wait()
	defer func() {
		for _, pid := range sleepers("127.28") {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	eventually.Within(t, 5*time.Second, func() error {
		if left := sleepers("127.28"); len(left) > 0 {
			return fmt.Errorf("the server was killed, and its sandboxed command lives on: pids %v", left)
		}
		return nil
	})
}

// sleepers returns the pids of the processes whose command line holds
// marker (the sandbox's sh and its sleep).
func sleepers(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if strings.Contains(string(b), marker) && !strings.Contains(string(b), "-test.run") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestNoInheritedDescriptors: a server may inherit descriptors without
// close-on-exec from whatever started it (a shell's `3<>/dev/tty`, a
// supervisor's pipe). The sandbox must not hand them to its commands: a
// descriptor goes past Landlock and the mount namespace alike. Here it
// is a file outside the workspace, which a command read through it.
func TestNoInheritedDescriptors(t *testing.T) {
	if !requireSandbox(t) {
		return
	}
	secretDir := dirOutsideTmp(t, "tack-fd-")
	secret := filepath.Join(secretDir, "secret")
	if err := os.WriteFile(secret, []byte("HOST-SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// No O_CLOEXEC: as a descriptor inherited from the server's parent is.
	fd, err := syscall.Open(secret, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	n := strconv.Itoa(fd)
	out, _ := run(t, sandbox.New(sandbox.Config{}), workspaceDir(t),
		"ls -l /proc/self/fd; cat <&"+n+"; cat /proc/self/fd/"+n)
	t.Logf("fd %d; sandbox output:\n%s", fd, out)
	if strings.Contains(out, "HOST-SECRET") {
		t.Errorf("a sandboxed command read a host file (outside the workspace, 0600 root) through descriptor %d the server inherited without close-on-exec", fd)
	}
}
