//go:build unix

package sqlite

import (
	"errors"
	"os"
	"syscall"
)

var errWouldBlock = errors.New("lock held")

// lockFile takes an exclusive flock on f without blocking. flock locks
// belong to the open file description, so a second Open in the same
// process is refused too.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errWouldBlock
		}
		return err
	}
}

func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
