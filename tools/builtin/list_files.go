package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tack-run/tack/tools"
)

// maxListEntries caps the entries one list_files call returns; it reads
// listBatch entries of the directory at a time.
const (
	maxListEntries = 1000
	listBatch      = 256
)

const listFilesSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory path, relative to the root directory. Default: the root itself."}
  },
  "additionalProperties": false
}`

func listFiles(ws tools.Workspace) tools.Tool {
	return tools.Define(tools.Spec{
		Name:        "list_files",
		Description: "List the entries of a directory under the root directory, one per line, sorted by name; directories end with a slash.",
		Schema:      json.RawMessage(listFilesSchema),
		Kind:        tools.Killable,
	}, func(ctx context.Context, args json.RawMessage, _ func(string)) (string, error) {
		var a struct {
			Path string `json:"path"`
		}
		if err := decodeArgs(args, &a); err != nil {
			return "", err
		}
		r, err := rootOf(ctx, ws)
		if err != nil {
			return "", err
		}
		return r.list(ctx, a.Path)
	})
}

func (r fileRoot) list(ctx context.Context, p string) (string, error) {
	f, err := r.openFile(ctx, p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && !info.IsDir() {
		return "", fmt.Errorf("%q is a file; use read_file to read it", p)
	}
	// A directory may hold millions of names (the session's shell can
	// make them): read a batch at a time and keep only the first
	// maxListEntries by name.
	var names []string
	total := 0
	for {
		entries, err := f.ReadDir(listBatch)
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			names = append(names, n)
		}
		total += len(entries)
		if len(names) >= 2*maxListEntries {
			slices.Sort(names)
			names = slices.Clone(names[:maxListEntries])
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", r.explain(p, err)
		}
	}
	if total == 0 {
		return "[empty directory]", nil
	}
	slices.Sort(names)
	var out strings.Builder
	for i, n := range names {
		if i == maxListEntries {
			break
		}
		out.WriteString(n)
		out.WriteByte('\n')
	}
	if total > maxListEntries {
		fmt.Fprintf(&out, "[... %d more entries]\n", total-maxListEntries)
	}
	return out.String(), nil
}
