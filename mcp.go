package tack

import (
	"context"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/tack-run/tack/actors"
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

// noteGroups records which servers session id names as "mcp:<server>",
// for mcpChanged.
func (rt *Runtime) noteGroups(id string, names []string) {
	if rt.mcp == nil {
		return
	}
	var servers []string
	for _, n := range names {
		if s, ok := strings.CutPrefix(n, mcp.Prefix); ok {
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 {
		rt.mcpGroups.Delete(id)
		return
	}
	rt.mcpGroups.Store(id, servers)
}

// mcpChanged gives the loaded sessions that name "mcp:<server>" the
// server's new tool list (tools_updated tells them what changed). A
// session that is not loaded gets the new list when it is restored.
func (rt *Runtime) mcpChanged(server string) {
	ts, err := rt.mcp.Resolve(context.Background(), []string{mcp.Prefix + server})
	if err != nil {
		if l := rt.env.Logger; l != nil {
			l.Warn("the changed tools of an MCP server could not be listed", zap.String("server", server), zap.Error(err))
		}
		return
	}
	rt.mcpGroups.Range(func(k, v any) bool {
		id := k.(string)
		pid, ok := rt.registry.Lookup(id)
		switch {
		case !ok:
			rt.mcpGroups.Delete(id)
		case slices.Contains(v.([]string), server):
			rt.system.Root.Send(pid, &actors.ReplaceTools{Prefix: server + "/", Tools: ts})
		}
		return true
	})
}
