package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tack-run/tack/tools"
)

// maxListEntries caps the entries one list_files call returns.
const maxListEntries = 1000

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
	entries, err := f.ReadDir(-1)
	if err != nil {
		return "", r.explain(p, err)
	}
	if len(entries) == 0 {
		return "[empty directory]", nil
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
		if e.IsDir() {
			names[i] += "/"
		}
	}
	slices.Sort(names)
	var out strings.Builder
	for i, n := range names {
		if i == maxListEntries {
			fmt.Fprintf(&out, "[... %d more entries]\n", len(names)-i)
			break
		}
		out.WriteString(n)
		out.WriteByte('\n')
	}
	return out.String(), nil
}
