// Package nodetest runs the parts of Tack's test suite that are written
// for Node: it finds Node and npm (or skips, except under CI=true, where
// they must be present), installs a folder's packages from its committed
// lockfile, and runs commands there.
package nodetest

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Node is an installed Node (20 or newer) with its npm.
type Node struct {
	Node, NPM string
}

// Need finds node (20 or newer) and npm on PATH, or skips the test — or
// fails it under CI=true.
func Need(t testing.TB) Node {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		Missing(t, "node is not installed")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		Missing(t, "npm is not installed")
	}
	v, err := exec.Command(node, "-p", "process.versions.node.split('.')[0]").Output()
	if err != nil {
		Missing(t, "node does not run: "+err.Error())
	}
	if major, _ := strconv.Atoi(strings.TrimSpace(string(v))); major < 20 {
		Missing(t, "node is older than 20")
	}
	return Node{Node: node, NPM: npm}
}

// Missing skips the test for why, or fails it under CI=true, where every
// tool the suite needs is installed by .ci/run.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s", why)
	}
	t.Skip(why)
}

// Install runs `npm ci` in dir: the packages of its package-lock.json,
// nothing else.
func (n Node) Install(ctx context.Context, t testing.TB, dir string) {
	t.Helper()
	n.Run(ctx, t, dir, n.NPM, "ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error")
}

// Run runs name with args in dir and fails the test, showing the output,
// when it does not succeed; it returns the output.
func (n Node) Run(ctx context.Context, t testing.TB, dir, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}
