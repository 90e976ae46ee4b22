package tack

import (
	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
	"github.com/tack-run/tack/tools/sandbox"
	"github.com/tack-run/tack/tools/workspace"
)

// WithWorkspaces sets where sessions' tools work (docs/sandbox.md):
// read_file, write_file and list_files are confined to a session's
// workspace and shell starts in it. The default is the process's working
// directory, shared by every session. With per-session workspaces a
// fork starts with a copy of its parent's, and a sub-agent works in its
// parent's.
func WithWorkspaces(ws *workspace.Workspaces) Option {
	return func(c *Config) { c.Workspaces = ws }
}

// WithSandbox runs shell in sb (docs/sandbox.md); nil, the default, runs
// it as this process runs. A program using it must call sandbox.Main
// first thing in main.
func WithSandbox(sb *sandbox.Sandbox) Option { return func(c *Config) { c.Sandbox = sb } }

// Workspaces returns where the runtime's sessions work.
func (rt *Runtime) Workspaces() *workspace.Workspaces { return rt.workspaces }

// workspaceTools returns shell and the file tools, working in the
// sessions' workspaces.
func workspaceTools(c *Config) []tools.Tool {
	if c.Workspaces == nil {
		c.Workspaces = workspace.Shared(".")
	}
	opts := []builtin.ShellOption{builtin.WithWorkspace(c.Workspaces)}
	if c.Sandbox != nil {
		opts = append(opts, builtin.WithSandbox(c.Sandbox))
	}
	return append(builtin.FilesIn(c.Workspaces), builtin.Shell(opts...))
}
