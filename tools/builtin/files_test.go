package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
)

// fileFixture lays out
//
//	base/root/a.txt         "one\ntwo\nthree\n"
//	base/root/empty.txt
//	base/root/bin.dat       with a NUL byte
//	base/root/sub/
//	base/root/inlink    ->  a.txt
//	base/root/link      ->  base/outside/secret.txt
//	base/root/linkdir   ->  base/outside
//	base/outside/secret.txt
//
// and returns the root and a Set of the file tools on it.
func fileFixture(t *testing.T) (string, *tools.Set) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(root, "a.txt"):         "one\ntwo\nthree\n",
		filepath.Join(root, "empty.txt"):     "",
		filepath.Join(root, "bin.dat"):       "ab\x00cd",
		filepath.Join(outside, "secret.txt"): "secret\n",
	}
	for p, content := range files {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(root, "inlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	set, err := tools.NewSet(builtin.Files(root)...)
	if err != nil {
		t.Fatalf("NewSet(Files): %v", err)
	}
	return root, set
}

// call validates and runs one call the way the runtime does.
func call(t *testing.T, set *tools.Set, name string, args any) tools.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Validate(name, raw); err != nil {
		return tools.Result{Content: err.Error(), IsError: true}
	}
	tool, _ := set.Get(name)
	return tools.Execute(context.Background(), tool, raw, nil)
}

func TestReadFile(t *testing.T) {
	root, set := fileFixture(t)
	tests := []struct {
		name string
		args map[string]any
		want tools.Result
	}{
		{name: "whole file", args: map[string]any{"path": "a.txt"},
			want: tools.Result{Content: "one\ntwo\nthree\n"}},
		{name: "offset and limit", args: map[string]any{"path": "a.txt", "offset": 2, "limit": 1},
			want: tools.Result{Content: "two\n[more lines follow: read_file with offset 3]"}},
		{name: "offset to the end", args: map[string]any{"path": "a.txt", "offset": 3},
			want: tools.Result{Content: "three\n"}},
		{name: "absolute path inside the root", args: map[string]any{"path": filepath.Join(root, "a.txt"), "limit": 1},
			want: tools.Result{Content: "one\n[more lines follow: read_file with offset 2]"}},
		{name: "symlink that stays inside", args: map[string]any{"path": "./inlink"},
			want: tools.Result{Content: "one\ntwo\nthree\n"}},
		{name: "empty file", args: map[string]any{"path": "empty.txt"},
			want: tools.Result{Content: "[empty file]"}},
		{name: "offset past the end", args: map[string]any{"path": "a.txt", "offset": 9},
			want: tools.Result{Content: `offset 9 is past the end of "a.txt", which has 3 lines`, IsError: true}},
		{name: "zero offset refused by the schema", args: map[string]any{"path": "a.txt", "offset": 0},
			want: tools.Result{Content: "invalid arguments for read_file: /offset: got 0, want at least 1", IsError: true}},
		{name: "binary file", args: map[string]any{"path": "bin.dat"},
			want: tools.Result{Content: `"bin.dat" looks like a binary file`, IsError: true}},
		{name: "directory", args: map[string]any{"path": "sub"},
			want: tools.Result{Content: `"sub" is a directory; use list_files to see what it holds`, IsError: true}},
		{name: "missing file", args: map[string]any{"path": "nope.txt"},
			want: tools.Result{Content: `"nope.txt" does not exist`, IsError: true}},
		{name: "escape with dot-dot", args: map[string]any{"path": "../outside/secret.txt"},
			want: tools.Result{Content: `path "../outside/secret.txt" is outside the root directory ` + root, IsError: true}},
		{name: "escape with dot-dot inside the path", args: map[string]any{"path": "sub/../../outside/secret.txt"},
			want: tools.Result{Content: `path "sub/../../outside/secret.txt" is outside the root directory ` + root, IsError: true}},
		{name: "absolute path outside", args: map[string]any{"path": "/etc/passwd"},
			want: tools.Result{Content: `path "/etc/passwd" is outside the root directory ` + root, IsError: true}},
		{name: "escape through a file symlink", args: map[string]any{"path": "link"},
			want: tools.Result{Content: `path "link" leads outside the root directory ` + root + " (through a symbolic link)", IsError: true}},
		{name: "escape through a directory symlink", args: map[string]any{"path": "linkdir/secret.txt"},
			want: tools.Result{Content: `path "linkdir/secret.txt" leads outside the root directory ` + root + " (through a symbolic link)", IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := call(t, set, "read_file", tt.args); got != tt.want {
				t.Errorf("read_file = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadFileLongLine(t *testing.T) {
	root, set := fileFixture(t)
	line := strings.Repeat("z", 300<<10)
	if err := os.WriteFile(filepath.Join(root, "long.txt"), []byte(line+"\nnext\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := call(t, set, "read_file", map[string]any{"path": "long.txt"})
	want := line[:256<<10] + "\n[line 1 is cut at 262144 bytes; read_file with offset 2 for what follows]"
	if got.IsError || got.Content != want {
		t.Errorf("read_file = %.80q... (%d bytes), want the line cut with a note", got.Content, len(got.Content))
	}
}

func TestWriteFile(t *testing.T) {
	root, set := fileFixture(t)
	base := filepath.Dir(root)
	tests := []struct {
		name     string
		args     map[string]any
		want     tools.Result
		check    string // file that must hold args["content"] afterwards
		notExist string // file that must not exist afterwards
	}{
		{name: "new file in new directories", args: map[string]any{"path": "new/dir/f.txt", "content": "hello"},
			want: tools.Result{Content: "wrote 5 bytes to new/dir/f.txt"}, check: filepath.Join(root, "new/dir/f.txt")},
		{name: "replace a file", args: map[string]any{"path": "a.txt", "content": "x\n"},
			want: tools.Result{Content: "wrote 2 bytes to a.txt"}, check: filepath.Join(root, "a.txt")},
		{name: "the root itself", args: map[string]any{"path": ".", "content": "x"},
			want: tools.Result{Content: `"." is the root directory, not a file`, IsError: true}},
		{name: "escape with dot-dot", args: map[string]any{"path": "../escape.txt", "content": "x"},
			want:     tools.Result{Content: `path "../escape.txt" is outside the root directory ` + root, IsError: true},
			notExist: filepath.Join(base, "escape.txt")},
		{name: "escape through a directory symlink", args: map[string]any{"path": "linkdir/planted.txt", "content": "x"},
			want:     tools.Result{Content: `path "linkdir/planted.txt" leads outside the root directory ` + root + " (through a symbolic link)", IsError: true},
			notExist: filepath.Join(base, "outside", "planted.txt")},
		{name: "escape through a file symlink", args: map[string]any{"path": "link", "content": "overwritten"},
			want: tools.Result{Content: `path "link" leads outside the root directory ` + root + " (through a symbolic link)", IsError: true}},
		{name: "missing content", args: map[string]any{"path": "b.txt"},
			want: tools.Result{Content: `invalid arguments for write_file: missing property "content"`, IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := call(t, set, "write_file", tt.args); got != tt.want {
				t.Errorf("write_file = %+v, want %+v", got, tt.want)
			}
			if tt.check != "" {
				data, err := os.ReadFile(tt.check)
				if err != nil || string(data) != tt.args["content"] {
					t.Errorf("%s holds %q, %v; want %q", tt.check, data, err, tt.args["content"])
				}
			}
			if tt.notExist != "" {
				if _, err := os.Stat(tt.notExist); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s exists (%v); the write escaped the root", tt.notExist, err)
				}
			}
		})
	}
	if data, _ := os.ReadFile(filepath.Join(base, "outside", "secret.txt")); string(data) != "secret\n" {
		t.Errorf("secret.txt outside the root was changed to %q", data)
	}
}

func TestListFiles(t *testing.T) {
	root, set := fileFixture(t)
	tests := []struct {
		name string
		args map[string]any
		want tools.Result
	}{
		{name: "root by default", args: map[string]any{},
			want: tools.Result{Content: "a.txt\nbin.dat\nempty.txt\ninlink\nlink\nlinkdir\nsub/\n"}},
		{name: "root by dot", args: map[string]any{"path": "."},
			want: tools.Result{Content: "a.txt\nbin.dat\nempty.txt\ninlink\nlink\nlinkdir\nsub/\n"}},
		{name: "empty directory", args: map[string]any{"path": "sub"},
			want: tools.Result{Content: "[empty directory]"}},
		{name: "a file", args: map[string]any{"path": "a.txt"},
			want: tools.Result{Content: `"a.txt" is a file; use read_file to read it`, IsError: true}},
		{name: "escape with dot-dot", args: map[string]any{"path": "../"},
			want: tools.Result{Content: `path "../" is outside the root directory ` + root, IsError: true}},
		{name: "escape through a directory symlink", args: map[string]any{"path": "linkdir"},
			want: tools.Result{Content: `path "linkdir" leads outside the root directory ` + root + " (through a symbolic link)", IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := call(t, set, "list_files", tt.args); got != tt.want {
				t.Errorf("list_files = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestListFilesOfAHugeDirectory: a directory of more names than
// list_files answers (its shell can make millions) is read a batch at a
// time, keeping the first by name only; the answer is the first 1,000
// names in order and how many more there are.
func TestListFilesOfAHugeDirectory(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "m")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 2600 // past two batches of kept names
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", (i*7919)%n)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := tools.NewSet(builtin.Files(root)...)
	if err != nil {
		t.Fatal(err)
	}
	r := call(t, set, "list_files", map[string]any{"path": "m"})
	lines := strings.Split(strings.TrimSuffix(r.Content, "\n"), "\n")
	if r.IsError || len(lines) != 1001 || lines[0] != "f00000" || lines[999] != "f00999" || lines[1000] != "[... 1600 more entries]" {
		t.Fatalf("list_files: %d lines, %q … %q", len(lines), lines[0], lines[len(lines)-1])
	}
}
