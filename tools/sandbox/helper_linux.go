package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Main makes this process the sandbox's helper when it was started as one
// (Sandbox.Command): it then never returns. Otherwise it returns at once.
// Call it first in main, and in TestMain where tests run sandboxed
// commands.
func Main() {
	if len(os.Args) < 3 || os.Args[1] != helperArg {
		return
	}
	// Capabilities, Landlock and the final exec are per thread: all of
	// it happens on this one.
	runtime.LockOSThread()
	var p plan
	err := json.Unmarshal([]byte(os.Args[2]), &p)
	if err == nil {
		err = p.enter()
	}
	fmt.Fprintf(os.Stderr, "sandbox unavailable: %v\n", err)
	os.Exit(126)
}

// newRoot is where the helper builds the sandbox's root before it moves
// there: the host's /tmp, covered by a tmpfs in the helper's own mount
// namespace.
const newRoot = "/tmp"

// devices are the files of /dev a command may use.
var devices = []string{"null", "zero", "full", "random", "urandom"}

// enter builds the sandbox and executes the command in it.
func (p *plan) enter() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private mounts: %w", err)
	}
	// The workspace may lie under the host's /tmp, which the new root
	// covers: hold it open.
	wsFD, err := unix.Open(p.Workspace, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	// So may a system directory: look at them all first.
	shown := make([]source, 0, len(p.System))
	for _, dir := range p.System {
		src, ok, err := look(dir)
		if err != nil {
			return err
		}
		if ok {
			shown = append(shown, src)
		}
	}
	opts := "mode=0755,size=" + strconv.FormatInt(p.Memory, 10)
	if err := unix.Mount("tmpfs", newRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("tmpfs root: %w", err)
	}
	system := make([]string, 0, len(shown))
	for _, src := range shown {
		if err := src.show(); err != nil {
			return err
		}
		system = append(system, src.path)
	}
	if err := makeDev(); err != nil {
		return err
	}
	for _, d := range []string{"/tmp", "/var/tmp"} {
		if err := os.MkdirAll(newRoot+d, 0o755); err != nil {
			return err
		}
		if err := os.Chmod(newRoot+d, 0o1777); err != nil {
			return err
		}
	}
	for _, d := range []string{Mount, "/proc"} {
		if err := os.Mkdir(newRoot+d, 0o755); err != nil {
			return err
		}
	}
	ws := "/proc/self/fd/" + strconv.Itoa(wsFD)
	if err := unix.Mount(ws, newRoot+Mount, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	unix.Close(wsFD)
	for _, h := range p.Hide {
		hide(newRoot + h)
	}
	// A fresh /proc shows this namespace's processes only. The kernel
	// allows one only while the host's is still in sight, so before the
	// pivot; where it refuses (a container hiding parts of its own), the
	// sandbox has no /proc.
	proc := unix.Mount("proc", newRoot+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "") == nil
	if err := pivot(); err != nil {
		return err
	}
	if err := os.Chdir(Mount); err != nil {
		return err
	}
	if err := p.landlock(system, proc); err != nil {
		return err
	}
	if err := p.becomeUser(); err != nil {
		return err
	}
	// The kernel forgets the parent-death signal (SysProcAttr.Pdeathsig)
	// when the ids change: ask for it again, or the command outlives a
	// server that is killed. A server that died in between, in the
	// microseconds since the helper started, is not seen.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("parent-death signal: %w", err)
	}
	// The limits come last, and nothing in this process may ask the
	// kernel for memory or a thread after them: the helper is a Go
	// program (a race-detector build especially) that may need more than
	// the command is given, and its runtime dies when a mapping fails.
	argv0, err := unix.BytePtrFromString("/bin/sh")
	if err != nil {
		return err
	}
	argv, err := ptrs([]string{"sh", "-c", p.Command})
	if err != nil {
		return err
	}
	envv, err := ptrs(os.Environ())
	if err != nil {
		return err
	}
	limits := p.limits()
	quiesce()
	if err := setLimits(limits); err != nil {
		return err
	}
	closeInherited()
	_, _, e := unix.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(argv0)), uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
	return fmt.Errorf("exec sh: %w", e)
}

// closeInherited has every descriptor but stdin, stdout and stderr
// close at the exec: the server may have inherited some without
// close-on-exec from whatever started it (a terminal's `3<>/dev/tty`, a
// supervisor's pipe), and a descriptor goes past Landlock and the mount
// namespace alike. They are marked close-on-exec, not closed: the Go
// runtime's own (its netpoller) stay in use until the exec. Raw system
// calls only: it runs after the limits.
func closeInherited() {
	if _, _, e := unix.RawSyscall(unix.SYS_CLOSE_RANGE, 3, ^uintptr(0), unix.CLOSE_RANGE_CLOEXEC); e == 0 {
		return
	}
	for fd := uintptr(3); fd < 1<<16; fd++ { // kernels before 5.11
		unix.RawSyscall(unix.SYS_FCNTL, fd, unix.F_SETFD, unix.FD_CLOEXEC)
	}
}

// quiesce leaves this goroutine the only one that runs until it executes
// sh. Other goroutines of the program (those its packages' init
// functions start) and the runtime's own (a GC cycle, a new thread for a
// goroutine that wakes) would otherwise map memory, and after the
// address-space limit such a mapping kills the helper ("fatal error:
// runtime: cannot allocate memory"), or prints that into the command's
// output when the exec wins the race. With one P, held by this goroutine
// making raw system calls only, nothing else is scheduled; with GC off
// no cycle starts; and a fresh time slice keeps the scheduler from
// preempting it in the microseconds left.
func quiesce() {
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(-1)
	runtime.Gosched()
}

// source is a system directory (or symbolic link) to show in the new
// root, looked at before the new root covers anything.
type source struct {
	path string
	// link is the target of a symbolic link (/bin -> usr/bin); else
	// fd holds the directory open.
	link string
	fd   int
}

// look opens dir; ok is false when it does not exist or is no directory.
func look(dir string) (src source, ok bool, err error) {
	info, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return source{}, false, nil
	case err != nil:
		return source{}, false, err
	case info.Mode()&fs.ModeSymlink != 0:
		link, err := os.Readlink(dir)
		return source{path: dir, link: link}, err == nil, err
	case !info.IsDir():
		return source{}, false, nil
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return source{}, false, fmt.Errorf("show %s: %w", dir, err)
	}
	return source{path: dir, fd: fd}, true, nil
}

// show binds the directory into the new root (read-only by Landlock),
// or copies the link.
func (s source) show() error {
	target := newRoot + s.path
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	if s.link != "" {
		return os.Symlink(s.link, target)
	}
	defer unix.Close(s.fd)
	if err := os.Mkdir(target, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(s.fd), target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("show %s: %w", s.path, err)
	}
	return nil
}

// makeDev gives the new root a /dev of harmless devices.
func makeDev() error {
	dev := newRoot + "/dev"
	if err := os.Mkdir(dev, 0o755); err != nil {
		return err
	}
	for _, d := range devices {
		if _, err := os.Stat("/dev/" + d); err != nil {
			continue
		}
		if err := os.WriteFile(dev+"/"+d, nil, 0o666); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+d, dev+"/"+d, "", unix.MS_BIND, ""); err != nil {
			os.Remove(dev + "/" + d)
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, dev+"/"+name); err != nil {
			return err
		}
	}
	return nil
}

// hide covers p, a denied path inside a system directory: an empty
// tmpfs over a directory, /dev/null over a file. A path this user cannot
// reach is not readable to the command either, and is left as it is.
func hide(p string) {
	info, err := os.Stat(p)
	if err != nil {
		return
	}
	if info.IsDir() {
		_ = unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, "size=4k,mode=0555")
		return
	}
	_ = unix.Mount("/dev/null", p, "", unix.MS_BIND, "")
}

// pivot makes the new root the root, and lets the host's go.
func pivot() error {
	if err := os.Chdir(newRoot); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host's root: %w", err)
	}
	return os.Chdir("/")
}

// limits returns the call's resource limits, the address space last:
// setLimits must not fail once that is lowered, as its error would need
// memory.
func (p *plan) limits() []rlimit {
	l := []rlimit{{unix.RLIMIT_NPROC, uint64(p.Procs)}, {unix.RLIMIT_CORE, 0}}
	if p.CPU > 0 {
		l = append(l, rlimit{unix.RLIMIT_CPU, uint64(p.CPU)})
	}
	return append(l, rlimit{unix.RLIMIT_AS, uint64(p.Memory)})
}

// rlimit is one resource limit, set as both soft and hard.
type rlimit struct {
	res int
	n   uint64
}

// setLimits sets limits on this process with raw system calls, which
// neither allocate nor let the scheduler in.
func setLimits(limits []rlimit) error {
	for i := range limits {
		l := unix.Rlimit{Cur: limits[i].n, Max: limits[i].n}
		if _, _, e := unix.RawSyscall6(unix.SYS_PRLIMIT64, 0, uintptr(limits[i].res), uintptr(unsafe.Pointer(&l)), 0, 0, 0); e != 0 {
			return fmt.Errorf("limit %d: %w", limits[i].res, e)
		}
	}
	return nil
}

// landlock restricts this thread, and what it executes, to reading the
// system directories and /proc, and writing the workspace and the
// temporary directories; without p.Network no TCP either.
func (p *plan) landlock(system []string, proc bool) error {
	r, err := newRuleset(p.Network)
	if err != nil {
		return err
	}
	ro := append([]string(nil), system...)
	if proc {
		ro = append(ro, "/proc")
	}
	steps := []struct {
		access uint64
		paths  []string
	}{
		{readRights, ro},
		// Listing the root shows only what the sandbox holds.
		{unix.LANDLOCK_ACCESS_FS_READ_DIR, []string{"/"}},
		{^uint64(0), []string{Mount, "/tmp", "/var/tmp"}},
		{unix.LANDLOCK_ACCESS_FS_READ_FILE, []string{"/dev/random", "/dev/urandom"}},
		{unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV,
			[]string{"/dev/null", "/dev/zero", "/dev/full"}},
	}
	for _, s := range steps {
		if err := r.allow(s.access, s.paths...); err != nil {
			unix.Close(r.fd)
			return err
		}
	}
	return r.restrict()
}

// becomeUser leaves the command no capabilities and, when the namespace
// maps one, the unprivileged user's ids. It changes this thread only,
// the one that executes sh.
func (p *plan) becomeUser() error {
	// SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP and their locks
	// (linux/securebits.h): root gets no capabilities from exec.
	const bits = 1<<0 | 1<<1 | 1<<2 | 1<<3
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, bits, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("ambient capabilities: %w", err)
	}
	if p.UID != 0 {
		if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
			return fmt.Errorf("setgroups: %w", e)
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(p.GID), uintptr(p.GID), uintptr(p.GID)); e != 0 {
			return fmt.Errorf("setresgid: %w", e)
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(p.UID), uintptr(p.UID), uintptr(p.UID)); e != 0 {
			return fmt.Errorf("setresuid: %w", e)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// ptrs returns ss as a NULL-terminated array of C strings, for execve.
func ptrs(ss []string) ([]*byte, error) {
	out := make([]*byte, len(ss)+1)
	for i, s := range ss {
		p, err := unix.BytePtrFromString(s)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}
