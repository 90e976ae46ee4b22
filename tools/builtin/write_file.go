package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/workspace"
)

const writeFileSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "File path, relative to the root directory. Missing parent directories are created."},
    "content": {"type": "string", "description": "The whole new content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`

func writeFile(ws tools.Workspace) tools.Tool {
	return tools.Define(tools.Spec{
		Name:        "write_file",
		Description: "Write content to a file under the root directory, replacing the file if it exists and creating missing parent directories.",
		Schema:      json.RawMessage(writeFileSchema),
		Kind:        tools.Killable,
	}, func(ctx context.Context, args json.RawMessage, _ func(string)) (string, error) {
		var a struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		}
		if err := decodeArgs(args, &a); err != nil {
			return "", err
		}
		r, err := rootOf(ctx, ws)
		if err != nil {
			return "", err
		}
		return r.write(ctx, a.Path, a.Content)
	})
}

func (r fileRoot) write(ctx context.Context, p, content string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	rel, err := r.local(p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", fmt.Errorf("%q is the root directory, not a file", p)
	}
	root, err := r.open()
	if err != nil {
		return "", err
	}
	defer root.Close()
	if dir := filepath.Dir(rel); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return "", r.explain(p, err)
		}
	}
	// Never root.WriteFile: it would wait for ever on a named pipe
	// without a reader, and write into one with a reader.
	f, err := workspace.Create(root, rel, 0o644)
	if err != nil {
		return "", r.explain(p, err)
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", r.explain(p, err)
	}
	if err := r.own(root, rel); err != nil {
		return "", r.explain(p, err)
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(content), p), nil
}
