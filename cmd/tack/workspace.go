package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/store/open"
	"github.com/tack-run/tack/tools/sandbox"
	"github.com/tack-run/tack/tools/workspace"
)

// toolFlags are the flags that say where tools work and how they are
// sandboxed (docs/sandbox.md).
type toolFlags struct {
	workspace     string
	workspaceRoot string
	sandbox       string
	network       bool
	env           string
	// perSession is set for serve and node: a workspace per session.
	perSession bool
	// deny names more files the sandbox hides (serve's --auth).
	deny []string
}

func (f *toolFlags) register(fs *flag.FlagSet, perSession bool) {
	f.perSession = perSession
	if perSession {
		fs.StringVar(&f.workspace, "workspace", "", "one directory every session's tools work in (one local user: refused with serve's --auth; default: a directory per session under --workspace-root)")
		fs.StringVar(&f.workspaceRoot, "workspace-root", "", "where each session's workspace is made, named after its id, and removed with it (default: workspaces/ beside the SQLite file, else $XDG_DATA_HOME/tack/workspaces)")
	} else {
		fs.StringVar(&f.workspace, "workspace", ".", "the directory the tools work in: read_file, write_file and list_files stay inside it, shell starts there")
	}
	fs.StringVar(&f.sandbox, "sandbox", "on", "on: shell runs sandboxed (writes only in the workspace and a private /tmp, no secrets, no network, bounded; see docs/sandbox.md); off: as this process")
	fs.BoolVar(&f.network, "sandbox-network", false, "let sandboxed commands reach the network (any outbound TCP)")
	fs.StringVar(&f.env, "tool-env", "", "comma-separated names of environment variables passed to sandboxed commands (besides PATH, HOME, TMPDIR and LANG)")
}

// options returns the runtime options of the flags; c is the command's
// common flags, configPath the model configuration file read, if any.
func (f *toolFlags) options(c *common, configPath string) ([]tack.Option, error) {
	ws, err := f.workspaces(c.store)
	if err != nil {
		return nil, err
	}
	if uid, gid := sandbox.Owner(); uid >= 0 && f.sandbox == "on" {
		ws = ws.OwnedBy(uid, gid)
	}
	opts := []tack.Option{tack.WithWorkspaces(ws)}
	switch f.sandbox {
	case "off":
		if f.network || f.env != "" {
			return nil, errors.New("--sandbox-network and --tool-env apply to the sandbox: not with --sandbox off")
		}
		return opts, nil
	case "on":
	default:
		return nil, fmt.Errorf("--sandbox %q: on or off", f.sandbox)
	}
	deny := append([]string{configPath}, f.deny...)
	if p := sqlitePath(c.store); p != "" {
		deny = append(deny, filepath.Dir(p), p, p+"-wal", p+"-shm", p+"-journal")
	}
	if !ws.IsShared() {
		deny = append(deny, ws.Root())
	}
	sb := sandbox.New(sandbox.Config{Network: f.network, Env: splitList(f.env), Deny: deny})
	return append(opts, tack.WithSandbox(sb)), nil
}

// workspaces resolves --workspace and --workspace-root.
func (f *toolFlags) workspaces(store string) (*workspace.Workspaces, error) {
	if f.workspace != "" && f.workspaceRoot != "" {
		return nil, errors.New("--workspace and --workspace-root: one or the other (one directory for all, or one per session)")
	}
	if f.workspace != "" {
		info, err := os.Stat(f.workspace)
		if err != nil {
			return nil, fmt.Errorf("--workspace: %w", err)
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("--workspace %s: not a directory", f.workspace)
		}
		return workspace.Shared(f.workspace), nil
	}
	root := f.workspaceRoot
	if root == "" {
		if p := sqlitePath(store); p != "" {
			root = filepath.Join(filepath.Dir(p), "workspaces")
		} else {
			db, err := open.DefaultSQLitePath()
			if err != nil {
				return nil, fmt.Errorf("--workspace-root: %w", err)
			}
			root = filepath.Join(filepath.Dir(db), "workspaces")
		}
	}
	return workspace.PerSession(root), nil
}

// sqlitePath returns the file of --store sqlite:PATH (the default file
// for sqlite:), or "" for another store.
func sqlitePath(store string) string {
	p, ok := strings.CutPrefix(store, "sqlite:")
	if !ok {
		return ""
	}
	if p == "" {
		p, _ = open.DefaultSQLitePath()
	}
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	return p
}
