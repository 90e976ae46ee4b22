package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/workspace"
)

// Files returns the file tools read_file, write_file and list_files, all
// confined to root: a path that leaves it, through ".." or a symbolic link
// (an absolute link counts as leaving), is refused with an error saying so.
// Paths are relative to root; an absolute path is accepted when it lies
// inside root. A path that is neither a regular file nor a directory (a
// named pipe, a socket, a device) is refused at once, never waited on
// (workspace.Open, workspace.Create). root is made absolute now and
// opened on each call, so it may be created later.
func Files(root string) []tools.Tool {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return FilesIn(fixedDir(root))
}

// FilesIn returns the file tools of [Files] confined to the workspace of
// each call's session: ws.Dir says which directory that is.
func FilesIn(ws tools.Workspace) []tools.Tool {
	return []tools.Tool{readFile(ws), writeFile(ws), listFiles(ws)}
}

// fixedDir is a tools.Workspace that is one directory for every call.
type fixedDir string

func (d fixedDir) Dir(context.Context) (string, error) { return string(d), nil }
func (d fixedDir) Owner() (uid, gid int)               { return -1, -1 }

// fileRoot is the directory the file tools are confined to for one call,
// and who owns what they write there (uid -1: leave it).
type fileRoot struct {
	dir      string
	uid, gid int
}

// rootOf returns the root of the call whose context is ctx.
func rootOf(ctx context.Context, ws tools.Workspace) (fileRoot, error) {
	dir, err := ws.Dir(ctx)
	if err != nil {
		return fileRoot{}, err
	}
	uid, gid := ws.Owner()
	return fileRoot{dir: dir, uid: uid, gid: gid}, nil
}

// own gives rel, and the directories between it and the root, to the
// workspace's owner.
func (r fileRoot) own(root *os.Root, rel string) error {
	if r.uid < 0 {
		return nil
	}
	for p := rel; p != "." && p != string(filepath.Separator); p = filepath.Dir(p) {
		if err := root.Lchown(p, r.uid, r.gid); err != nil {
			return err
		}
	}
	return nil
}

// local turns the path a model gave into a clean path relative to the root,
// or explains why it is outside.
func (r fileRoot) local(p string) (string, error) {
	if p == "" {
		return ".", nil
	}
	rel := p
	if filepath.IsAbs(p) {
		var err error
		if rel, err = filepath.Rel(r.dir, p); err != nil {
			return "", r.outside(p)
		}
	}
	rel = filepath.Clean(rel)
	if rel != "." && !filepath.IsLocal(rel) {
		return "", r.outside(p)
	}
	return rel, nil
}

func (r fileRoot) outside(p string) error {
	return fmt.Errorf("path %q is outside the root directory %s", p, r.dir)
}

// open opens the root for one call.
func (r fileRoot) open() (*os.Root, error) {
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open the root directory: %w", err)
	}
	return root, nil
}

// explain rewords the errors of os.Root for a model.
func (r fileRoot) explain(p string, err error) error {
	var notRegular *workspace.NotRegularError
	switch {
	case errors.As(err, &notRegular):
		return &workspace.NotRegularError{Path: p, Mode: notRegular.Mode}
	case workspace.Escapes(err):
		return fmt.Errorf("path %q leads outside the root directory %s (through a symbolic link)", p, r.dir)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%q does not exist", p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%q: permission denied", p)
	default:
		return err
	}
}

// openFile opens path p (file or directory) inside the root, with the
// errors a model can act on; closing the file releases the root too.
// Anything else (a named pipe the session's shell made, a socket) is
// refused at once rather than waited on (workspace.Open).
func (r fileRoot) openFile(ctx context.Context, p string) (*rootedFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rel, err := r.local(p)
	if err != nil {
		return nil, err
	}
	root, err := r.open()
	if err != nil {
		return nil, err
	}
	f, err := workspace.Open(root, rel)
	if err != nil {
		root.Close()
		return nil, r.explain(p, err)
	}
	return &rootedFile{File: f, root: root}, nil
}

// rootedFile is a file opened through an os.Root it keeps open.
type rootedFile struct {
	*os.File
	root *os.Root
}

// Close closes the file and its root.
func (f *rootedFile) Close() error {
	err := f.File.Close()
	f.root.Close()
	return err
}
