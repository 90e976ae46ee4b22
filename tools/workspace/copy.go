package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"syscall"
)

// copyDepth is the deepest a workspace's copy goes: a deeper workspace
// is not copied. The copy holds open each directory it is in, two
// descriptors a level, so that it finds each path from its parent and
// not from the top: a fork of a chain of 3,000 directories, which a shell
// makes in a second, cost 36 s of CPU when every path was found from the
// workspace down.
const copyDepth = 256

// A copier copies one workspace into another (Source.CopyTo).
type copier struct {
	w     *Workspaces
	top   *os.Root          // the copy's workspace
	seen  []fs.FileInfo     // the directories copied, on the way down
	links map[fileID]string // first copies of linked files, by source, as paths in top
}

// copyWorkspace copies workspace in into out, for w.
func copyWorkspace(w *Workspaces, in, out *os.Root) error {
	c := &copier{w: w, top: out, links: map[fileID]string{}}
	from, info, err := openDir(in, ".", nil)
	if from == nil {
		return vanished(err)
	}
	defer from.Close()
	c.seen = append(c.seen, info)
	return vanished(c.dir(from, out, "."))
}

// vanished is err, or nil when err says that what was copied vanished
// as the copy ran: a file, a directory, the workspace itself (its session
// deleted). Those are left out.
func vanished(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// dir copies the entries of directory in into directory out, depth
// first; rel is their path in the workspace. What vanishes as the copy
// runs (its session's shell deletes it) is left out.
func (c *copier) dir(in, out *os.Root, rel string) error {
	f, err := in.Open(".")
	if err != nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, d := range entries {
		name := d.Name()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			var link string
			if link, err = in.Readlink(name); err == nil {
				err = c.own(out, name, out.Symlink(link, name))
			}
		case d.IsDir():
			if err = c.own(out, name, out.Mkdir(name, 0o755)); err == nil {
				err = c.sub(in, out, name, path.Join(rel, name))
			}
		case d.Type().IsRegular():
			err = c.own(out, name, c.file(in, out, name, path.Join(rel, name)))
		default:
			// devices, sockets, pipes: not workspace content
		}
		if err = vanished(err); err != nil {
			return err
		}
	}
	return nil
}

// sub copies directory name of in, at rel in the workspace, into the
// directory name of out made for it.
func (c *copier) sub(in, out *os.Root, name, rel string) error {
	if len(c.seen) >= copyDepth {
		return fmt.Errorf("the workspace is more than %d directories deep", copyDepth)
	}
	from, info, err := openDir(in, name, c.seen)
	if from == nil {
		return err
	}
	defer from.Close()
	to, err := out.OpenRoot(name + "/.")
	if err != nil {
		return err
	}
	defer to.Close()
	c.seen = append(c.seen, info)
	defer func() { c.seen = c.seen[:len(c.seen)-1] }()
	return c.dir(from, to, rel)
}

// openDir opens directory p of root as a root of its own, for a walk that
// has opened the directories of seen on its way down. It opens "p/.", so
// that p is opened as a directory (O_DIRECTORY): a plain open(2) of a p
// swapped for a named pipe after its listing waited for a writer for
// ever, one OS thread a walk. It returns no root, and no error, when p is
// by then no directory (a named pipe, a file swapped in) or one of seen
// (a link swapped in to one above it): the walk leaves it out, and ends.
func openDir(root *os.Root, p string, seen []fs.FileInfo) (*os.Root, fs.FileInfo, error) {
	dir, err := root.OpenRoot(p + "/.")
	if errors.Is(err, syscall.ENOTDIR) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	info, err := dir.Stat(".")
	if err != nil || slices.ContainsFunc(seen, func(s fs.FileInfo) bool { return os.SameFile(s, info) }) {
		dir.Close()
		return nil, nil, err
	}
	return dir, info, nil
}

// own gives what the copy made at name in root to the owner, unless
// making it failed.
func (c *copier) own(root *os.Root, name string, err error) error {
	if err != nil || c.w.uid < 0 {
		return err
	}
	return root.Lchown(name, c.w.uid, c.w.gid)
}

// file copies the regular file name of in, at rel in the workspace, to
// name in out. What it is when it is opened decides: something else by
// then (a directory, a named pipe, a device) is not copied, and opening
// it does not block. The copy takes no more disk than its source: a file
// linked more than once is linked again to its first copy (links, by
// source file), and a sparse file's holes stay holes (copyData). A
// workspace's shell makes a file of 10 TB that takes no disk with
// `truncate`, or a hundred links to one: a fork that wrote them out
// filled the disk.
func (c *copier) file(in, out *os.Root, name, rel string) error {
	src, err := Open(in, name)
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
		if first, done := c.links[id]; done {
			return c.top.Link(first, rel)
		}
		c.links[id] = rel
	}
	dst, err := out.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if err := copyData(dst, src, info.Size()); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
