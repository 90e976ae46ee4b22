// Package mcptest is the test kit of tools/mcp: real MCP servers for
// tests.
//
// # Usage
//
//	cfg := mcp.ServerConfig{Command: mcptest.Everything(t)}
//	srv := sdk.NewServer(&sdk.Implementation{Name: "test"}, nil) // add tools
//	cfg := mcptest.InMemory(srv)
//
// [Everything] is the command of @modelcontextprotocol/server-everything
// as installed by `npm ci` in tools/mcp/testdata/everything (the version
// is pinned by the lockfile committed there). Without the install a test
// is skipped with a message saying how to install it, except with
// CI=true, where it fails: CI installs it (.ci/run).
//
// [InMemory] serves an SDK server over in-memory transports, a fresh
// connection each time Tack (re)starts the server: the kit for the fault
// cases (a tool that never answers, a server that goes away).
package mcptest
