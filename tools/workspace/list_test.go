package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestList: regular files only, by name as a walk meets them, no link
// followed, and no more entries looked at than the limit: past it the
// listing says there is more.
func TestList(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.txt", "a/b", "a/c/d", "b/e", "z"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".", filepath.Join(dir, "a", "loop")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()

	files, more, err := List(root, 100)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
		if f.Size != int64(len(f.Path)) || f.Modified.IsZero() {
			t.Errorf("%s: size %d, modified %v", f.Path, f.Size, f.Modified)
		}
	}
	if err != nil || more || strings.Join(paths, " ") != "a/b a/c/d a.txt b/e z" {
		t.Fatalf("List = %v, more %v, %v", paths, more, err)
	}
	files, more, err = List(root, 3)
	if err != nil || !more || len(files) > 3 {
		t.Fatalf("List with a limit of 3: %d files, more %v, %v", len(files), more, err)
	}
}

// TestListBoundsWhatItReads: a directory of many names is read a batch at
// a time, and no more than the limit is kept.
func TestListBoundsWhatItReads(t *testing.T) {
	dir := t.TempDir()
	for i := range 3000 {
		if err := os.WriteFile(filepath.Join(dir, strings.Repeat("n", 100)+string(rune('a'+i%26))+strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var files []File
	var more bool
	allocs := testing.AllocsPerRun(1, func() { files, more, _ = List(root, 10) })
	if len(files) != 10 || !more {
		t.Fatalf("%d files, more %v", len(files), more)
	}
	if allocs > 8000 { // reading every name costs about 15,000

		t.Errorf("%v allocations to list 100 of 5,000 names: it read them all", allocs)
	}
}

// TestListStopsDeep: two chains of directories deeper than listDepth
// are each listed down to it, and the listing says there is more (the
// first chain cut must not end the walk before the second).
func TestListStopsDeep(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		deep := dir
		for range listDepth + 10 {
			deep = filepath.Join(deep, name)
		}
		if err := os.MkdirAll(deep, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{filepath.Join(dir, name, name, "f"+name), filepath.Join(deep, "bottom")} {
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	files, more, err := List(root, 10000)
	if err != nil || !more || len(files) != 2 || files[0].Path != "a/a/fa" || files[1].Path != "b/b/fb" {
		t.Fatalf("List = %v, more %v, %v", files, more, err)
	}
}
