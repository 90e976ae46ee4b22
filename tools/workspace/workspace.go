// Package workspace gives every session a directory of its own to work in,
// or one directory shared by all (docs/sandbox.md).
//
// # Usage
//
//	ws := workspace.PerSession("/var/lib/tack/workspaces")
//	dir, err := ws.Make("s-1") // /var/lib/tack/workspaces/s-1, made now
//	err = ws.Remove("s-1")
//
// A sub-agent, whose id is "<parent>/sub-N", works in its parent's
// workspace: the directory is named after the id up to the first '/'.
// [Shared] makes every session work in one directory; Remove and Copy do
// nothing then.
//
// A workspace holds whatever its session's shell leaves there, named
// pipes included: [Open] and [Create] open a path of it through an
// os.Root without ever waiting on one, and refuse what is not a regular
// file; the file tools, the HTTP files routes and Copy use them.
//
// # Concurrency
//
// A Workspaces holds no mutable state; its methods may be called from any
// goroutine. Two calls making the same directory at once both succeed.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unicode"

	"github.com/tack-run/tack/tools"
)

// Workspaces maps sessions to their directories. It implements
// tools.Workspace.
type Workspaces struct {
	root   string
	shared bool
	uid    int
	gid    int
}

var _ tools.Workspace = (*Workspaces)(nil)

// PerSession gives each session the directory root/<session>, made on
// first use.
func PerSession(root string) *Workspaces {
	return &Workspaces{root: abs(root), uid: -1, gid: -1}
}

// Shared makes every session work in dir.
func Shared(dir string) *Workspaces {
	return &Workspaces{root: abs(dir), shared: true, uid: -1, gid: -1}
}

func abs(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}

// OwnedBy returns w giving the directories it makes, and the files the
// tools write in them, to uid and gid: the sandbox's user when the
// server runs as root (it could not write there otherwise). A shared
// directory is never changed.
func (w *Workspaces) OwnedBy(uid, gid int) *Workspaces {
	c := *w
	c.uid, c.gid = uid, gid
	return &c
}

// Root returns the directory the workspaces are made in (PerSession) or
// the shared directory.
func (w *Workspaces) Root() string { return w.root }

// IsShared reports whether every session works in one directory.
func (w *Workspaces) IsShared() bool { return w.shared }

// Owner returns the owner given by OwnedBy, or -1, -1.
func (w *Workspaces) Owner() (uid, gid int) {
	if w.shared {
		return -1, -1
	}
	return w.uid, w.gid
}

// name returns the directory name of session id: its root session's id,
// with each capital letter written as '^' and the small one where the
// file system ignores case (foldsCase), so that sessions "Proj" and "proj"
// never share a directory, nor a new one's clearing empty the other's.
func name(id string) (string, error) {
	if i := strings.IndexByte(id, '/'); i >= 0 {
		id = id[:i]
	}
	if id == "" || id == "." || id == ".." || !filepath.IsLocal(id) || strings.ContainsAny(id, `/\^`) {
		return "", fmt.Errorf("workspace: session id %q cannot name a directory", id)
	}
	if foldsCase && strings.ContainsFunc(id, unicode.IsUpper) {
		var b strings.Builder
		for _, r := range id {
			if unicode.IsUpper(r) {
				b.WriteByte('^')
				r = unicode.ToLower(r)
			}
			b.WriteRune(r)
		}
		id = b.String()
	}
	return id, nil
}

// foldsCase is set where file systems ignore case by default (macOS's
// APFS, Windows' NTFS).
var foldsCase = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// Path returns the directory of session id without making it.
func (w *Workspaces) Path(id string) (string, error) {
	if w.shared {
		return w.root, nil
	}
	n, err := name(id)
	if err != nil {
		return "", err
	}
	return filepath.Join(w.root, n), nil
}

// Make returns the directory of session id, making it (and the root) if
// needed, mode 0700, given to the owner of OwnedBy.
func (w *Workspaces) Make(id string) (string, error) {
	dir, err := w.Path(id)
	if err != nil || w.shared {
		return dir, err
	}
	if err := os.MkdirAll(w.root, 0o711); err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	switch err := os.Mkdir(dir, 0o700); {
	case errors.Is(err, fs.ErrExist):
		return dir, nil
	case err != nil:
		return "", fmt.Errorf("workspace: %w", err)
	}
	if w.uid >= 0 {
		if err := os.Lchown(dir, w.uid, w.gid); err != nil {
			return "", fmt.Errorf("workspace: %w", err)
		}
	}
	return dir, nil
}

// Dir returns the workspace of the session tools.SessionOf(ctx) names,
// making it if needed. A call outside any session (a tool run directly)
// works in the shared directory, or is refused per session.
func (w *Workspaces) Dir(ctx context.Context) (string, error) {
	if w.shared {
		return w.root, nil
	}
	id := tools.SessionOf(ctx)
	if id == "" {
		return "", errors.New("workspace: the call belongs to no session")
	}
	return w.Make(id)
}

// Remove deletes the workspace of session id and everything in it. A
// sub-agent's id removes nothing: the workspace is its parent's.
func (w *Workspaces) Remove(id string) error {
	if w.shared || strings.Contains(id, "/") {
		return nil
	}
	dir, err := w.Path(id)
	if err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// Copy makes the workspace of session to a copy of from's (a fork's
// choice: each then goes its own way). Regular files, directories and
// symbolic links are copied, the links as they are; a from without a
// workspace yet gives none. Named pipes, sockets and devices are not
// workspace content: they are skipped and the rest is copied, also when
// a file becomes one between its listing and its opening (a pipe is
// opened without waiting for a writer, so the copy never hangs on one).
// Both workspaces are opened as os.Roots, so nothing outside them is
// read or written, even while from's own session changes it: a file or
// directory swapped for a link to elsewhere between its listing and its
// reading (a shell can do that as the fork runs) fails the copy instead
// of copying what the link points at.
func (w *Workspaces) Copy(from, to string) error {
	if w.shared {
		return nil
	}
	src, err := w.Path(from)
	if err != nil {
		return err
	}
	dst, err := w.Path(to)
	if err != nil {
		return err
	}
	in, err := os.OpenRoot(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	if _, err := w.Make(to); err != nil {
		return err
	}
	out, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	return w.copyDir(in, out, ".", nil, map[fileID]string{})
}

// copyDir copies the entries of directory dir of in into out, depth
// first; seen holds the directories opened on the way down. A directory
// is opened with Open, which never blocks: fs.WalkDir opened it with a
// plain open(2), which a directory swapped for a named pipe after its
// listing held for ever, one OS thread a fork. What is by then no
// directory is not copied, nor is a directory met twice (swapped for a
// link to one above it), so the copy ends.
func (w *Workspaces) copyDir(in, out *os.Root, dir string, seen []fs.FileInfo, links map[fileID]string) error {
	f, info, err := openDir(in, dir, seen)
	if f == nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	seen = append(seen, info)
	for _, d := range entries {
		p := path.Join(dir, d.Name())
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := in.Readlink(p)
			if err == nil {
				err = out.Symlink(link, p)
			}
			err = w.own(out, p, err)
		case d.IsDir():
			if err = w.own(out, p, out.Mkdir(p, 0o755)); err == nil {
				err = w.copyDir(in, out, p, seen, links)
			}
		case d.Type().IsRegular():
			err = w.own(out, p, copyFile(in, out, p, links))
		default:
			// devices, sockets, pipes: not workspace content
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// openDir opens directory p of root for a walk that has opened the
// directories of seen on its way down, with Open, which never blocks. It
// returns no file, and no error, when p is by then no directory (a named
// pipe, a file swapped in) or one of seen (a link swapped in to one
// above it): the walk leaves it out, and ends.
func openDir(root *os.Root, p string, seen []fs.FileInfo) (*os.File, fs.FileInfo, error) {
	f, err := Open(root, p)
	var notRegular *NotRegularError
	if errors.As(err, &notRegular) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil || !info.IsDir() || slices.ContainsFunc(seen, func(s fs.FileInfo) bool { return os.SameFile(s, info) }) {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// own gives what Copy made at p in root to the owner, unless making it
// failed.
func (w *Workspaces) own(root *os.Root, p string, err error) error {
	if err != nil || w.uid < 0 {
		return err
	}
	return root.Lchown(p, w.uid, w.gid)
}

// copyFile copies the regular file p of root in to p in root out. What p
// is when it is opened decides: something else by then (a directory, a
// named pipe, a device) is not copied, and opening it does not block.
// The copy takes no more disk than its source: a file linked more than
// once is linked again to its first copy (links, by source file), and a
// sparse file's holes stay holes (copyData). A workspace's shell makes a
// file of 10 TB that takes no disk with `truncate`, or a hundred links to
// one: a fork that wrote them out filled the disk.
func copyFile(in, out *os.Root, p string, links map[fileID]string) error {
	src, err := Open(in, p)
	var notRegular *NotRegularError
	if errors.As(err, &notRegular) {
		return nil
	}
	if err != nil {
		return err
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return err
	}
	if id, ok := linkedFile(info); ok {
		if first, done := links[id]; done {
			return out.Link(first, p)
		}
		links[id] = p
	}
	dst, err := out.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if err := copyData(dst, src, info.Size()); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// Escapes reports whether err is os.Root's refusal of a path that leaves
// its root, as a symbolic link pointing out of a workspace makes it. The
// error value is unexported, so its text is matched, at any depth
// (MkdirAll nests one PathError in another).
func Escapes(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}
