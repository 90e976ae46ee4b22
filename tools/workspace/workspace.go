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
	"path/filepath"
	"runtime"
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

// Copy makes the workspace of session to a copy of from's: OpenSource,
// Stage, then Place.
func (w *Workspaces) Copy(from, to string) error {
	src, err := w.OpenSource(from)
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stage()
	if err != nil {
		return err
	}
	defer st.Discard()
	return st.Place(to)
}

// A Source is a session's workspace held open to be copied (a fork's
// choice: each then goes its own way). Held open, it stays that
// session's: were the session deleted and its id taken by a new session
// before the copy, the copy would still be of the workspace the source
// named when opened (or of nothing, once removed), never of the new
// session's.
type Source struct {
	w    *Workspaces
	root *os.Root // nil: shared workspaces, or none made yet
}

// OpenSource opens the workspace of session from for CopyTo. A from
// without a workspace yet gives a Source that copies nothing.
func (w *Workspaces) OpenSource(from string) (*Source, error) {
	if w.shared {
		return &Source{w: w}, nil
	}
	dir, err := w.Path(from)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return &Source{w: w}, nil
	}
	if err != nil {
		return nil, err
	}
	return &Source{w: w, root: root}, nil
}

// Close releases the source.
func (s *Source) Close() error {
	if s.root == nil {
		return nil
	}
	return s.root.Close()
}

// Stage copies the source into a directory of its own among the
// workspaces, for Place to make some session's workspace: a fork copies
// before its session exists, so that no one else's session can have
// taken the fork's id (closed meanwhile, without a store) by the time a
// slow copy is done. The directory is named "fork+…": a '+' is in no
// session's id, so no session's workspace is ever it.
//
// Regular files, directories and symbolic links are copied, the links as
// they are. Named pipes, sockets and devices are not workspace content:
// they are skipped and the rest is copied, also when a file becomes one
// between its listing and its opening (a pipe is opened without waiting
// for a writer, so the copy never hangs on one). Both directories are
// opened as os.Roots, so nothing outside them is read or written, even
// while the source's own session changes it: a file or directory swapped
// for a link to elsewhere between its listing and its reading (a shell
// can do that as the fork runs) fails the copy instead of copying what
// the link points at. A source without a workspace stages nothing.
func (s *Source) Stage() (*Staged, error) {
	w := s.w
	if s.root == nil {
		return &Staged{w: w}, nil
	}
	if err := os.MkdirAll(w.root, 0o711); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	dir, err := os.MkdirTemp(w.root, "fork+*") // mode 0700
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	st := &Staged{w: w, dir: dir}
	if err := st.fill(s.root); err != nil {
		st.Discard()
		return nil, err
	}
	return st, nil
}

// fill copies root into the staged directory, given to the owner.
func (st *Staged) fill(root *os.Root) error {
	if st.w.uid >= 0 {
		if err := os.Lchown(st.dir, st.w.uid, st.w.gid); err != nil {
			return err
		}
	}
	out, err := os.OpenRoot(st.dir)
	if err != nil {
		return err
	}
	defer out.Close()
	return copyWorkspace(st.w, root, out)
}

// Staged is a copy of a workspace made by Source.Stage, not yet any
// session's.
type Staged struct {
	w   *Workspaces
	dir string // "" once placed or discarded, or when nothing was staged
}

// Place makes the staged copy the workspace of session to, at once (a
// rename). to must have none yet: a workspace there is an error, and the
// copy stays staged.
func (st *Staged) Place(to string) error {
	if st.dir == "" {
		return nil
	}
	dst, err := st.w.Path(to)
	if err != nil {
		return err
	}
	if err := os.Rename(st.dir, dst); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	st.dir = ""
	return nil
}

// Discard removes the staged copy unless Place took it.
func (st *Staged) Discard() {
	if st.dir != "" {
		_ = os.RemoveAll(st.dir)
		st.dir = ""
	}
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
