package builtin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/output"
)

const (
	// defaultReadLimit is how many lines read_file returns when not told.
	defaultReadLimit = 2000
	// maxReadBytes caps what one read_file call returns.
	maxReadBytes = 256 << 10
	// sniffLen is how much read_file looks at to tell a binary file.
	sniffLen = 8000
)

const readFileSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "File path, relative to the root directory."},
    "offset": {"type": "integer", "minimum": 1, "description": "First line to return, counting from 1. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "description": "Most lines to return. Default 2000."}
  },
  "required": ["path"],
  "additionalProperties": false
}`

func readFile(ws tools.Workspace) tools.Tool {
	return tools.Define(tools.Spec{
		Name:        "read_file",
		Description: "Read a text file under the root directory and return its lines as they are. When more lines follow, a last line in brackets gives the offset to continue from.",
		Schema:      json.RawMessage(readFileSchema),
		Kind:        tools.Killable,
	}, func(ctx context.Context, args json.RawMessage, _ func(string)) (string, error) {
		var a struct {
			Path   string  `json:"path"`
			Offset float64 `json:"offset"`
			Limit  float64 `json:"limit"`
		}
		if err := decodeArgs(args, &a); err != nil {
			return "", err
		}
		offset, limit := max(1, int(a.Offset)), int(a.Limit)
		if limit <= 0 {
			limit = defaultReadLimit
		}
		r, err := rootOf(ctx, ws)
		if err != nil {
			return "", err
		}
		return r.read(ctx, a.Path, offset, limit)
	})
}

func (r fileRoot) read(ctx context.Context, p string, offset, limit int) (string, error) {
	f, err := r.openFile(ctx, p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return "", fmt.Errorf("%q is a directory; use list_files to see what it holds", p)
	}

	br := bufio.NewReader(f)
	if head, _ := br.Peek(sniffLen); bytes.IndexByte(head, 0) >= 0 {
		return "", fmt.Errorf("%q looks like a binary file", p)
	}
	var out strings.Builder
	line := 0
	for {
		s, err := readLine(br, maxReadBytes)
		if s != "" {
			line++
			if line >= offset {
				if out.Len() == 0 && len(s) > maxReadBytes {
					fmt.Fprintf(&out, "%s\n[line %d is cut at %d bytes; read_file with offset %d for what follows]",
						output.TrimPartialRune([]byte(s[:maxReadBytes])), line, maxReadBytes, line+1)
					return out.String(), nil
				}
				if line-offset == limit || out.Len()+len(s) > maxReadBytes {
					fmt.Fprintf(&out, "%s[more lines follow: read_file with offset %d]", newlineIfMissing(out.String()), line)
					return out.String(), nil
				}
				out.WriteString(s)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", r.explain(p, err)
		}
	}
	switch {
	case line == 0:
		return "[empty file]", nil
	case line < offset:
		return "", fmt.Errorf("offset %d is past the end of %q, which has %d lines", offset, p, line)
	}
	return out.String(), nil
}

// readLine reads one line, newline included, keeping at most limit+1 bytes
// of it: the caller sees that it was longer than limit.
func readLine(br *bufio.Reader, limit int) (string, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if room := limit + 1 - len(line); room > 0 {
			line = append(line, chunk[:min(room, len(chunk))]...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return string(line), err
		}
	}
}

// newlineIfMissing returns "\n" when s is not empty and lacks a final newline.
func newlineIfMissing(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return "\n"
	}
	return ""
}
