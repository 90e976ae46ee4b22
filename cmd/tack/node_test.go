package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestNodeClusterFlags: --cluster needs PostgreSQL and a well-formed
// provider configuration; each mistake is named, and the process exits
// before serving.
func TestNodeClusterFlags(t *testing.T) {
	bin := buildTack(t)
	cases := []flagCase{
		{"sqlite", []string{"--cluster", "c", "--store", "sqlite:" + t.TempDir() + "/t.db", "--cluster-seeds", "127.0.0.1:6330"},
			"--cluster c needs --store postgres://...: the members share their sessions and leases through PostgreSQL (got --store sqlite:"},
		{"memory", []string{"--cluster", "c", "--store", "memory"}, "--cluster c needs --store postgres://..."},
		{"no seeds", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x"},
			"--cluster c: cluster c needs seeds: the automanaged endpoints of its members (HOST:PORT, ...) or the etcd endpoints (--cluster-provider, --cluster-seeds, --cluster-port, --cluster-refresh, --cluster-ttl)"},
		{"provider", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x", "--cluster-seeds", "a:1", "--cluster-provider", "consul"},
			`--cluster c: cluster provider "consul": want automanaged, etcd or postgres`},
		{"postgres seeds", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x", "--cluster-seeds", "a:1", "--cluster-provider", "postgres"},
			"--cluster c: cluster c: the postgres provider takes no seeds (the members register in their PostgreSQL database)"},
		{"ttl", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x", "--cluster-provider", "postgres", "--cluster-ttl", "1s", "--cluster-refresh", "1s"},
			"--cluster c: cluster c: the TTL 1s must be longer than the refresh 1s"},
		{"seed", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x", "--cluster-seeds", "a:1,,b:2"},
			`--cluster c: cluster seed "" is not an address`},
	}
	flagErrors(t, bin, []string{"node", "--listen", "127.0.0.1:0"}, cases)
}

// TestServeClusterFlags: a front end (tack serve --cluster) needs the
// members' PostgreSQL store and well-formed seeds; each mistake is named,
// and the process exits before serving.
func TestServeClusterFlags(t *testing.T) {
	bin := buildTack(t)
	cases := []flagCase{
		{"sqlite", []string{"--cluster", "c", "--store", "sqlite:" + t.TempDir() + "/t.db", "--cluster-seeds", "127.0.0.1:6330"},
			"--cluster c needs --store postgres://...: a front end reads the sessions' owners and list from the members' PostgreSQL store (got --store sqlite:"},
		{"memory", []string{"--cluster", "c", "--store", "memory"}, "--cluster c needs --store postgres://..."},
		{"no seeds", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x"}, "--cluster c: cluster c needs seeds"},
		{"provider", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x", "--cluster-seeds", "a:1", "--cluster-provider", "consul"},
			`--cluster c: cluster provider "consul": want automanaged, etcd or postgres`},
		{"port", []string{"--cluster", "c", "--store", "postgres://127.0.0.1:1/x", "--cluster-seeds", "a:1", "--cluster-port", "6330"},
			"flag provided but not defined: -cluster-port"},
	}
	flagErrors(t, bin, []string{"serve", "--addr", "127.0.0.1:0"}, cases)
}

// flagCase is a command line that must fail with want in its output.
type flagCase struct {
	name string
	args []string
	want string
}

// flagErrors runs bin with command and each case's args, and wants it to
// exit with an error naming the mistake.
func flagErrors(t *testing.T, bin string, command []string, cases []flagCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(bin, append(slices.Clone(command), tc.args...)...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Fatalf("tack %s %q: %v\n%s", command[0], tc.args, err, out)
			}
		})
	}
}

// TestRetainFlags: --retain is refused negative, without a store, and on
// a cluster's front end, on serve and node alike.
func TestRetainFlags(t *testing.T) {
	bin := buildTack(t)
	flagErrors(t, bin, []string{"serve", "--addr", "127.0.0.1:0"}, []flagCase{
		{"negative", []string{"--retain", "-1h", "--store", "memory"}, "--retain -1h0m0s: must not be negative"},
		{"memory", []string{"--retain", "1h", "--store", "memory"}, "--retain 1h0m0s needs a store"},
		{"not a duration", []string{"--retain", "a month"}, `invalid value "a month" for flag -retain`},
		{"front end", []string{"--retain", "1h", "--cluster", "c", "--store", "postgres://127.0.0.1:1/x", "--cluster-seeds", "a:1"},
			"--retain with --cluster: a front end hosts no session"},
	})
	flagErrors(t, bin, []string{"node", "--listen", "127.0.0.1:0"}, []flagCase{
		{"negative", []string{"--retain", "-1s"}, "--retain -1s: must not be negative"},
		{"memory", []string{"--retain", "1h", "--store", "memory"}, "--retain 1h0m0s needs a store"},
	})
}
