package tack

import (
	"context"
	"slices"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/mcp"
)

// mcpTools takes the names of MCP tools ("<server>/<tool>", "mcp:<server>")
// out of names and returns the rest and the tools they name, starting
// their servers if need be. Without WithMCP every name is left to the
// catalog. A server that cannot start fails with unknown_tool and a
// message naming the server.
func (rt *Runtime) mcpTools(names []string) ([]string, []tools.Tool, error) {
	if rt.mcp == nil || !slices.ContainsFunc(names, mcp.IsMCPName) {
		return names, nil, nil
	}
	var rest, remote []string
	for _, n := range names {
		if mcp.IsMCPName(n) {
			remote = append(remote, n)
		} else {
			rest = append(rest, n)
		}
	}
	ts, err := rt.mcp.Resolve(context.Background(), remote)
	if err != nil {
		return nil, nil, &Error{Code: events.CodeUnknownTool, Message: err.Error()}
	}
	return rest, ts, nil
}
