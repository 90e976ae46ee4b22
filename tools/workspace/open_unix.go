//go:build unix

package workspace

import (
	"errors"
	"os"
	"syscall"
)

// openFlags are added to every open of Open and Create: O_NONBLOCK so
// that opening a named pipe returns at once (for reading, whether or not
// a writer is there; for writing, ENXIO without a reader), O_NOCTTY so
// that a terminal device never becomes the server's.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY

// noReader reports whether err is open(2)'s ENXIO: O_WRONLY|O_NONBLOCK
// of a named pipe that no one reads, or of a socket.
func noReader(err error) bool { return errors.Is(err, syscall.ENXIO) }

// blocking clears O_NONBLOCK on f, a regular file or a directory. Linux
// and the BSDs ignore the flag for those, so reads and writes would work
// with it; clearing it keeps the file exactly what os.Root.Open gives,
// whatever the file system (a FUSE server sees the flag). The runtime
// poller refuses regular files and directories, so it never relied on
// the flag.
func blocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
