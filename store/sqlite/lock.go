package sqlite

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tack-run/tack/store"
)

// fileLock is the exclusive, advisory lock that makes one process the
// database's only writer. It lives on a separate PATH.lock file, never on
// the database: SQLite's own POSIX locks on the database would be dropped
// when any descriptor of that file in the process closes. The kernel
// releases the lock when the process dies, so a crash leaves nothing stale.
type fileLock struct{ f *os.File }

// lockPath is the lock file of the database at path.
func lockPath(path string) string { return path + ".lock" }

// acquireLock takes the lock of the database at path without waiting. When
// another process (or another Open in this one) holds it, the error wraps
// store.ErrLocked and names the holder's pid, which the holder wrote into
// the file.
func acquireLock(path string) (*fileLock, error) {
	lp := lockPath(path)
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: lock file: %w", err)
	}
	if err := lockFile(f); err != nil {
		holder := readHolder(lp)
		f.Close()
		if err == errWouldBlock {
			return nil, fmt.Errorf("%w: %s is open for writing by %s (lock %s); stop it or use another --store",
				store.ErrLocked, path, holder, lp)
		}
		return nil, fmt.Errorf("sqlite store: locking %s: %w", lp, err)
	}
	// Best effort: the pid only improves the error message of the next
	// opener.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &fileLock{f: f}, nil
}

func readHolder(lp string) string {
	b, err := os.ReadFile(lp)
	if pid := strings.TrimSpace(string(b)); err == nil && pid != "" {
		return "process " + pid
	}
	return "another process"
}

// release drops the lock. The file stays: removing it would race with a
// process that has just opened it and is about to lock it.
func (l *fileLock) release() error {
	unlockFile(l.f)
	return l.f.Close()
}
