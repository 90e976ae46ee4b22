// Package mcp turns the MCP servers of the config file ("mcp_servers")
// into tools.Tool values, with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) as the client.
//
// # Usage
//
//	m, err := mcp.New(map[string]mcp.ServerConfig{
//		"fs": {Command: []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"}},
//	}, mcp.Options{})
//	defer m.Close()
//	ts, err := m.Resolve(ctx, []string{"fs/read_file"}) // or "mcp:fs": all of fs's tools
//
// A server's tools are named "<server>/<tool>"; each has the input schema
// the server gives, and is Killable. A call is one tools/call: text
// content is the result, images and audio become a one-line description,
// resource links their URI, embedded resources their text; an isError
// result or a failed call is an error (an error tool result).
// notifications/progress become the tool's updates ("progress 2/5").
//
// # Lifecycle
//
// A server is started on first use (a child process over stdio, or a
// streamable HTTP session) and shared by every caller; Options.MaxCalls
// bounds its concurrent calls (8 by default; more wait for a slot or for
// their context). A start that takes longer than Options.StartTimeout
// (30 s) fails, as does a process that exits; the error names the server
// and carries the end of its stderr. After a failed start, the next
// start waits out a backoff (0.5 s doubling to 30 s) during which uses
// fail at once with the last error. A server that dies is forgotten when
// its connection ends; the call that was running gets an error, and the
// next use starts the server again. A call that fails without an answer
// from the server drops the connection the same way. Close shuts every server down: stdin
// closed, then SIGTERM after a second, then SIGKILL.
//
// # Cancellation
//
// A call returns as soon as its context is cancelled; the SDK then sends
// notifications/cancelled for the request on a goroutine of its own, so
// a server that never answers cannot hold the caller.
//
// # Tool list changes
//
// On notifications/tools/list_changed the Manager lists the server's
// tools again and, when they differ, calls the functions given to
// OnToolsChanged with the server's name.
//
// # Concurrency
//
// A Manager and its tools are safe for concurrent use.
//
// # Testing
//
// Tests run @modelcontextprotocol/server-everything over stdio (installed
// by `npm ci` in testdata/everything; see mcptest) and SDK servers over
// in-memory transports for the fault cases.
package mcp
