package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// File is a regular file of a workspace, as List finds it.
type File struct {
	Path     string // relative to the workspace, with slashes
	Size     int64
	Modified time.Time
}

// listBatch is how many entries List reads of a directory at a time;
// listDepth is the deepest it goes, and listBytes the most path bytes it
// keeps: os.Root finds a path one component at a time, so a chain of
// 3,000 directories cost a listing 12 s, and 5,000 paths of a thousand
// long names each would hold gigabytes.
const (
	listBatch = 256
	listDepth = 64
	listBytes = 8 << 20
)

// List returns the regular files under root, recursively, without
// following symbolic links, in the order a walk that lists each directory
// by name meets them. It looks at most limit
// entries (files, directories and the rest), reading each directory a
// batch at a time, and reports more when it stopped there: a workspace's
// shell can fill one directory with millions of names, which a listing
// that read them all held in memory. It reports more too when it leaves
// out what lies deeper than listDepth directories, or passes listBytes
// of paths. Each directory is opened through
// root (openDir), so one swapped for a link leading out of the
// workspace, or for a named pipe, as the listing runs is not followed,
// nor waited on; nor is a directory met twice. Each file is looked at through root
// too. What vanishes or changes kind while List runs is left out.
func List(root *os.Root, limit int) (files []File, more bool, err error) {
	var seen []fs.FileInfo
	stack := []string{"."}
	budget, pathBytes, deep := limit, 0, false
	for len(stack) > 0 && !more {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		dir, info, err := openDir(root, p, seen)
		if dir == nil {
			if err != nil && p == "." && !errors.Is(err, fs.ErrNotExist) {
				return nil, false, err
			}
			continue
		}
		seen = append(seen, info)
		f, err := dir.Open(".")
		for err == nil && !more {
			entries, err := f.ReadDir(listBatch)
			for _, d := range entries {
				if budget == 0 {
					more = true
					break
				}
				budget--
				rel := path.Join(p, d.Name())
				if pathBytes += len(rel); pathBytes > listBytes {
					more = true
					break
				}
				switch {
				case d.IsDir() && strings.Count(rel, "/") >= listDepth-1:
					deep = true // deeper than listDepth: left out, the rest listed
				case d.IsDir():
					stack = append(stack, rel)
				case d.Type().IsRegular():
					if fi, err := dir.Lstat(d.Name()); err == nil && fi.Mode().IsRegular() {
						files = append(files, File{Path: rel, Size: fi.Size(), Modified: fi.ModTime().UTC()})
					}
				}
			}
			if err != nil { // io.EOF, or a directory gone meanwhile
				break
			}
		}
		if f != nil {
			f.Close()
		}
		dir.Close()
	}
	slices.SortFunc(files, func(a, b File) int { return byName(a.Path, b.Path) })
	return files, more || deep, nil
}

// byName orders paths as a walk that lists each directory by name meets
// them: "a/b" before "a.txt".
func byName(a, b string) int {
	return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
}
