package workspace

import (
	"fmt"
	"io/fs"
	"os"
)

// Open opens name in root for reading, as root.Open does, but never
// blocks on what is not a regular file: it opens with O_NONBLOCK, so a
// named pipe without a writer does not hang open(2), then looks at what
// it opened and refuses anything but a regular file or a directory (a
// named pipe, a socket, a device) with a *NotRegularError. A workspace
// is the session's own to fill: its shell can `mkfifo p` there, and a
// read of p that waited for a writer would hold its OS thread for good.
// Directories are opened, for their callers to list or to refuse as
// they do. The file returned reads as a plain blocking file.
func Open(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	return checked(f, name, true)
}

// Create opens name in root for writing, truncated, creating it with
// perm if it does not exist, as root.OpenFile(name,
// O_WRONLY|O_CREATE|O_TRUNC, perm) does, but never writes into, nor
// blocks on, what is not a regular file: an existing named pipe, socket
// or device is refused with a *NotRegularError (it is opened with
// O_NONBLOCK, and truncated only once known to be a regular file). A
// directory fails as it does with root.OpenFile.
func Create(root *os.Root, name string, perm fs.FileMode) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|openFlags, perm)
	if err != nil {
		if noReader(err) {
			// A named pipe nobody reads, or a socket: open(2) refuses
			// them for writing without waiting (ENXIO).
			mode := fs.ModeIrregular
			if info, serr := root.Stat(name); serr == nil && !info.Mode().IsRegular() {
				mode = info.Mode().Type()
			}
			return nil, &NotRegularError{Path: name, Mode: mode}
		}
		return nil, err
	}
	if f, err = checked(f, name, false); err != nil {
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checked returns f if it is a regular file (or, with dirOK, a
// directory), made blocking again; else it closes f and says what it is.
func checked(f *os.File, name string, dirOK bool) (*os.File, error) {
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if m := info.Mode(); !m.IsRegular() && !(dirOK && m.IsDir()) {
		f.Close()
		return nil, &NotRegularError{Path: name, Mode: m.Type()}
	}
	if err := blocking(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// NotRegularError is [Open]'s and [Create]'s refusal of a path that is
// not a regular file: a named pipe, a socket, a device.
type NotRegularError struct {
	Path string      // the path as given
	Mode fs.FileMode // its type bits (fs.ModeIrregular when unknown)
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%q is not a regular file (%s)", e.Path, kindOf(e.Mode))
}

// kindOf names the type of a file that is not regular.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	default:
		return "of an unknown kind"
	}
}
