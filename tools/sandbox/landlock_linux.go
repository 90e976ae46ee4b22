package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock, through its three system calls. (The go-landlock library
// restricts every thread of a process through libpsx, which wraps the
// creation of every thread of the server and makes the linker external;
// the helper restricts one thread, the one that executes sh, so it needs
// none of that.)

// Access rights by the Landlock ABI version that introduced them.
const (
	fsV1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	fsV2 = fsV1 | unix.LANDLOCK_ACCESS_FS_REFER
	fsV3 = fsV2 | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	fsV5 = fsV3 | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	netV4   = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	scopeV6 = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL

	// fileRights are those a rule on a file (not a directory) may hold.
	fileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	readRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
)

// landlockABI returns the kernel's Landlock ABI version, 0 without one.
func landlockABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

// ruleset is a Landlock ruleset being built.
type ruleset struct {
	fd      int
	handled uint64
}

// newRuleset handles every file system right the kernel knows, TCP
// unless network, and the IPC scopes.
func newRuleset(network bool) (*ruleset, error) {
	abi := landlockABI()
	if abi < 1 {
		return nil, errors.New("the kernel has no Landlock")
	}
	var attr unix.LandlockRulesetAttr
	switch {
	case abi >= 5:
		attr.Handled_access_fs = fsV5
	case abi >= 3:
		attr.Handled_access_fs = fsV3
	case abi == 2:
		attr.Handled_access_fs = fsV2
	default:
		attr.Handled_access_fs = fsV1
	}
	if abi >= 4 && !network {
		attr.Handled_access_net = netV4
	}
	if abi >= 6 {
		attr.Scoped = scopeV6
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return nil, fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	return &ruleset{fd: int(fd), handled: attr.Handled_access_fs}, nil
}

// allow grants access (within what is handled) beneath each path; a
// path that does not exist is skipped. On a file only file rights count.
func (r *ruleset) allow(access uint64, paths ...string) error {
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("landlock: %s: %w", p, err)
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		a := access & r.handled
		if err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			a &= fileRights
		}
		attr := unix.LandlockPathBeneathAttr{Allowed_access: a, Parent_fd: int32(fd)}
		if err == nil {
			_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(r.fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
			if e != 0 {
				err = e
			}
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("landlock: %s: %w", p, err)
		}
	}
	return nil
}

// restrict enforces the ruleset on the calling thread (and what it
// executes); it sets no_new_privs, which Landlock requires.
func (r *ruleset) restrict() error {
	defer unix.Close(r.fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(r.fd), 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return nil
}
