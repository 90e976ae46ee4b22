package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/output"
)

// tool is one tool of an MCP server, as a tools.Tool named
// "<server>/<tool>". Calls go to whatever connection the server has at
// the time, so a tool outlives restarts of its server.
type tool struct {
	tools.Compiled // every session that holds the tool shares its schema
	s              *server
	remote         string
	spec           tools.Spec
}

// newTool converts an MCP tool; its input schema is taken as the server
// sends it, and Tack validates the arguments against it before a call.
func newTool(s *server, t *sdk.Tool) (*tool, error) {
	if !tools.ValidName(s.name + "/" + t.Name) {
		return nil, fmt.Errorf("the name %q does not fit a model's function names (letters, digits, '_' and '-', at most %d with the server's name)", t.Name, tools.MaxNameLen)
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		schema = nil
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return &tool{s: s, remote: t.Name, spec: tools.Spec{
		Name: s.name + "/" + t.Name, Description: desc, Schema: schema, Kind: tools.Killable,
	}}, nil
}

// Spec implements tools.Tool.
func (t *tool) Spec() tools.Spec { return t.spec }

// Run implements tools.Tool: one tools/call. What the server sends is
// bounded by MaxResult: the result, an error's text (which becomes the
// result), and the progress messages streamed as updates.
func (t *tool) Run(ctx context.Context, args json.RawMessage, update func(string)) (string, error) {
	text, err := t.s.call(ctx, t.remote, args, output.Updates(MaxResult, update))
	return text, output.CapError(err, MaxResult)
}

// render turns a tools/call result into the text of a tool result: text
// as it is, images and audio as a one-line description (their data is
// not passed on), resource links as their URI, embedded resources as
// their text (or a description for binary ones). Parts are joined by
// newlines. A result with no content but structured content gives that
// content's JSON. What passes MaxResult is cut out of the middle.
func render(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes, not played]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s%s]", c.URI, named(c.Name)))
		case *sdk.EmbeddedResource:
			parts = append(parts, resource(c.Resource))
		default:
			b, _ := json.Marshal(c)
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		parts = append(parts, string(b))
	}
	return output.Cap(strings.Join(parts, "\n"), MaxResult)
}

// MaxResult bounds the text of a tools/call result: its head and tail,
// as the shell tool keeps a command's output. An MCP server is a third
// party; its answer goes into the session's history, which every later
// request sends to the model.
const MaxResult = output.DefaultLimit

// resource describes an embedded resource: its URI then its text, or its
// type and size when it is binary.
func resource(r *sdk.ResourceContents) string {
	switch {
	case r == nil:
		return "[resource]"
	case r.Blob != nil:
		return fmt.Sprintf("[resource %s: %s, %d bytes, not shown]", r.URI, r.MIMEType, len(r.Blob))
	default:
		return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
	}
}

func named(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}

// tailSize is how much of a stdio server's stderr is kept for the error
// of a failed start.
const tailSize = 2048

// tail keeps the last tailSize bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailSize; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

// text is "; stderr: <tail>" or "" when nothing was written (or t is nil).
func (t *tail) text() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if s == "" {
		return ""
	}
	return "; stderr: " + s
}
