package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNodeClusterFlags: --cluster needs PostgreSQL and a well-formed
// provider configuration; each mistake is named, and the process exits
// before serving.
func TestNodeClusterFlags(t *testing.T) {
	bin := buildTack(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"sqlite", []string{"--cluster", "c", "--store", "sqlite:" + t.TempDir() + "/t.db", "--cluster-seeds", "127.0.0.1:6330"},
			"--cluster c needs --store postgres://...: the members share their sessions and leases through PostgreSQL (got --store sqlite:"},
		{"memory", []string{"--cluster", "c", "--store", "memory"}, "--cluster c needs --store postgres://..."},
		{"no seeds", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x"},
			"--cluster c: cluster c needs seeds: the automanaged endpoints of its members (HOST:PORT, ...) or the etcd endpoints (--cluster-provider, --cluster-seeds, --cluster-port)"},
		{"provider", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x", "--cluster-seeds", "a:1", "--cluster-provider", "consul"},
			`--cluster c: cluster provider "consul": want automanaged or etcd`},
		{"seed", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x", "--cluster-seeds", "a:1,,b:2"},
			`--cluster c: cluster seed "" is not an address`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(bin, append([]string{"node", "--listen", "127.0.0.1:0"}, tc.args...)...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Fatalf("tack node %q: %v\n%s", tc.args, err, out)
			}
		})
	}
}

// TestServeClusterFlags: a front end (tack serve --cluster) needs the
// members' PostgreSQL store and well-formed seeds; each mistake is named,
// and the process exits before serving.
func TestServeClusterFlags(t *testing.T) {
	bin := buildTack(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"sqlite", []string{"--cluster", "c", "--store", "sqlite:" + t.TempDir() + "/t.db", "--cluster-seeds", "127.0.0.1:6330"},
			"--cluster c needs --store postgres://...: a front end reads the sessions' owners and list from the members' PostgreSQL store (got --store sqlite:"},
		{"memory", []string{"--cluster", "c", "--store", "memory"}, "--cluster c needs --store postgres://..."},
		{"no seeds", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x"}, "--cluster c: cluster c needs seeds"},
		{"provider", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x", "--cluster-seeds", "a:1", "--cluster-provider", "consul"},
			`--cluster c: cluster provider "consul": want automanaged or etcd`},
		{"port", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x", "--cluster-seeds", "a:1", "--cluster-port", "6330"},
			"flag provided but not defined: -cluster-port"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Fatalf("tack serve %q: %v\n%s", tc.args, err, out)
			}
		})
	}
}
