package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// nobody is the user (and group) a sandbox runs as when the server is
// root.
const nobody = 65534

// Owner returns the user and group sandboxed commands run as: 65534 when
// this process is root, else -1, -1 (this process's own, which owns what
// it makes anyway).
func Owner() (uid, gid int) {
	if os.Geteuid() == 0 {
		return nobody, nobody
	}
	return -1, -1
}

// command1 builds the helper's command for plan p. The helper starts as
// the root of a new user namespace; when the server is root, that is
// the host's root (so the helper reaches whatever it must mount) and the
// namespace also maps the user the command becomes, 65534. Otherwise the
// namespace maps the server's own user only, as root. done is for the
// caller to call once the command has started (or failed to).
func command1(ctx context.Context, helper string, p plan, env []string) (cmd *exec.Cmd, done func(), err error) {
	root := os.Geteuid() == 0
	uids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
	gids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	if root {
		uids = append(uids, syscall.SysProcIDMap{ContainerID: nobody, HostID: nobody, Size: 1})
		gids = append(gids, syscall.SysProcIDMap{ContainerID: nobody, HostID: nobody, Size: 1})
		p.UID, p.GID = nobody, nobody
	}
	arg, err := json.Marshal(p)
	if err != nil {
		return nil, nil, err
	}
	cmd = exec.CommandContext(ctx, helper, helperArg, string(arg))
	cmd.Env = env
	cmd.Dir = "/"
	flags := syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
	if !p.Network {
		flags |= syscall.CLONE_NEWNET
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 uintptr(flags),
		UidMappings:                uids,
		GidMappings:                gids,
		GidMappingsEnableSetgroups: root,
		// Root's supplementary groups are dropped (Groups is empty);
		// another user may not change its own.
		Credential: &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: !root},
		// A session of its own, so no controlling terminal: a server
		// started from a terminal (tack serve in the foreground, tack
		// chat) would give its commands that terminal, whose input
		// TIOCSTI fills with commands the operator's shell then runs.
		Setsid:    true,
		Pdeathsig: syscall.SIGKILL,
	}
	// The helper is the PID namespace's first process (then sh is):
	// killing it kills every process of the call.
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	return cmd, func() {}, nil
}

var probe struct {
	once sync.Once
	err  error
}

// Available reports why no sandbox can be had here, as an error
// beginning "sandbox unavailable:", or nil. It checks Landlock and runs
// the helper once (the first call only).
func Available() error {
	probe.once.Do(func() { probe.err = check() })
	return probe.err
}

func check() error {
	if landlockABI() < 1 {
		return errors.New("sandbox unavailable: the kernel has no Landlock")
	}
	helper, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sandbox unavailable: cannot find this program to run the helper: %w", err)
	}
	dir, err := os.MkdirTemp("", "tack-sandbox-probe-")
	if err != nil {
		return fmt.Errorf("sandbox unavailable: %w", err)
	}
	defer os.RemoveAll(dir)
	if uid, gid := Owner(); uid >= 0 {
		_ = os.Chown(dir, uid, gid)
	}
	p := plan{Workspace: dir, Command: "echo ok", System: DefaultSystem, Procs: DefaultProcs, Memory: DefaultMemory}
	cmd, done, err := command1(context.Background(), helper, p, []string{"PATH=/usr/bin:/bin"})
	if err != nil {
		return fmt.Errorf("sandbox unavailable: %w", err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	done()
	if err != nil || out.String() != "ok\n" {
		msg := bytes.TrimSpace(out.Bytes())
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(msg) == 0 {
			msg = []byte("the helper did not answer: does this program's main call sandbox.Main?")
		}
		return fmt.Errorf("sandbox unavailable: %v: %s", err, msg)
	}
	return nil
}
