// Package sandbox runs a tool's command line where it can harm nothing
// but its session's workspace (docs/sandbox.md).
//
// # Usage
//
// The sandbox re-executes the running program with a hidden first
// argument: the program's main, and the TestMain of every test package
// that runs sandboxed commands, must call [Main] first.
//
//	func main() {
//		sandbox.Main() // returns at once unless this process is a sandbox
//		...
//	}
//
//	sb := sandbox.New(sandbox.Config{Deny: []string{"/etc/tack/auth.json"}})
//	cmd, err := sb.Command(ctx, "/srv/ws/s-1", "ls -l")
//
// # How
//
// On Linux the command runs in new user, mount, PID, IPC, UTS and (unless
// Config.Network) network namespaces. The helper process makes a root of
// its own on a tmpfs holding the system's directories (read-only by
// Landlock), /dev's harmless devices, a fresh /proc, private /tmp and
// /var/tmp, and the workspace at [Mount]; it sets the limits, becomes an
// unprivileged user (65534 when the server runs as root, else the
// server's own user), restricts itself with Landlock and executes sh as
// the namespace's first process, so that every process the command
// starts ends with it. Elsewhere [Available] says why there is no
// sandbox.
//
// # Concurrency
//
// A Sandbox holds no mutable state and may be used from any goroutine.
package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Mount is where the workspace appears inside the sandbox: the command's
// working directory and HOME.
const Mount = "/workspace"

// Defaults of Config.
const (
	DefaultProcs  = 256
	DefaultMemory = 1 << 30
)

// helperArg is the hidden first argument that makes a process the
// sandbox's helper (Main).
const helperArg = "__tack_sandbox"

// Config says what a sandboxed command may do. Zero fields take their
// defaults.
type Config struct {
	// Network lets the command reach the network (any outbound TCP);
	// false gives it a network namespace with nothing in it.
	Network bool
	// Env names the server's environment variables passed on besides
	// PATH, HOME, TMPDIR and LANG.
	Env []string
	// Deny names files and directories that must stay unreadable even
	// when they lie under a system directory the sandbox shows (the
	// auth and config files, the store, the data directory).
	Deny []string
	// System lists the directories shown read-only (default
	// [DefaultSystem]); those that do not exist, and those under /tmp or
	// /var/tmp (the sandbox's own there), are left out.
	System []string
	// Procs bounds the processes of one call (RLIMIT_NPROC in the
	// call's own user namespace; default DefaultProcs).
	Procs int
	// Memory bounds each process's address space in bytes (RLIMIT_AS;
	// default DefaultMemory), and the size of the private /tmp.
	Memory int64
	// CPU bounds each process's CPU time (RLIMIT_CPU); 0 takes the time
	// left until the call's deadline, and no limit without one.
	CPU time.Duration
	// Helper is the program that is re-executed as the helper; empty
	// means this program (os.Executable), whose main calls Main.
	Helper string
}

// DefaultSystem is what the sandbox shows of the host, read-only: its
// programs, libraries and their configuration.
var DefaultSystem = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// Sandbox starts sandboxed commands.
type Sandbox struct {
	cfg Config
}

// New returns a sandbox configured by c.
func New(c Config) *Sandbox {
	if c.Procs <= 0 {
		c.Procs = DefaultProcs
	}
	if c.Memory <= 0 {
		c.Memory = DefaultMemory
	}
	if c.System == nil {
		c.System = DefaultSystem
	}
	var system []string
	for _, d := range c.System {
		d = filepath.Clean(d)
		if !within(d, "/tmp") && !within(d, "/var/tmp") && filepath.IsAbs(d) {
			system = append(system, d)
		}
	}
	c.System = system
	deny := make([]string, 0, len(c.Deny))
	for _, d := range c.Deny {
		if d == "" {
			continue
		}
		if a, err := filepath.Abs(d); err == nil {
			d = a
		}
		deny = append(deny, d)
	}
	c.Deny = deny
	return &Sandbox{cfg: c}
}

// plan is what the parent tells the helper, as JSON in its arguments.
type plan struct {
	Workspace string   `json:"workspace"`
	Command   string   `json:"command"`
	System    []string `json:"system"`
	Hide      []string `json:"hide,omitempty"`
	Procs     int      `json:"procs"`
	Memory    int64    `json:"memory"`
	CPU       int64    `json:"cpu,omitempty"`
	Network   bool     `json:"network"`
	// UID and GID are the ids inside the namespace the command runs as
	// (0: the namespace's root, without capabilities).
	UID int `json:"uid,omitempty"`
	GID int `json:"gid,omitempty"`
}

// env returns the command's environment.
func (s *Sandbox) env() []string {
	lang := os.Getenv("LANG")
	if lang == "" {
		lang = "C.UTF-8"
	}
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
		"HOME=" + Mount, "TMPDIR=/tmp", "LANG=" + lang,
	}
	for _, n := range s.cfg.Env {
		if v, ok := os.LookupEnv(n); ok {
			env = append(env, n+"="+v)
		}
	}
	return env
}

// hidden returns the denied paths the command could otherwise see, as
// it sees them: those under a system directory, and those inside the
// workspace dir (a config file in the working directory of tack rpc).
// The helper covers them.
func (s *Sandbox) hidden(dir string) []string {
	var out []string
	for _, d := range s.cfg.Deny {
		if rel, err := filepath.Rel(dir, d); err == nil && filepath.IsLocal(rel) {
			out = append(out, filepath.Join(Mount, rel))
			continue
		}
		for _, sys := range s.cfg.System {
			if within(d, sys) {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// cpuSeconds is the CPU limit of a call whose context is ctx.
func (s *Sandbox) cpuSeconds(ctx context.Context) int64 {
	d := s.cfg.CPU
	if d <= 0 {
		dl, ok := ctx.Deadline()
		if !ok {
			return 0
		}
		d = time.Until(dl)
	}
	return max(1, int64((d+time.Second-1)/time.Second))
}

// Command returns the command that runs `sh -c command` sandboxed with
// workspace dir; the caller sets its output, runs it, and calls done once
// it has started (or failed to). Cancelling ctx kills the sandbox and
// everything in it. It fails, with an error beginning "sandbox
// unavailable:", where no sandbox can be had.
func (s *Sandbox) Command(ctx context.Context, dir, command string) (cmd *exec.Cmd, done func(), err error) {
	if err := Available(); err != nil {
		return nil, nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, nil, fmt.Errorf("sandbox: workspace: %w", err)
	}
	helper := s.cfg.Helper
	if helper == "" {
		if helper, err = os.Executable(); err != nil {
			return nil, nil, fmt.Errorf("sandbox unavailable: cannot find this program to run the helper: %w", err)
		}
	}
	p := plan{Workspace: dir, Command: command, System: s.cfg.System, Hide: s.hidden(dir),
		Procs: s.cfg.Procs, Memory: s.cfg.Memory, CPU: s.cpuSeconds(ctx), Network: s.cfg.Network}
	return command1(ctx, helper, p, s.env())
}

// within reports whether path p is dir or lies under it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}
