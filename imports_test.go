package tack_test

import (
	"os/exec"
	"strings"
	"testing"
)

// layers is the import order of docs/architecture.md: a package may import packages of
// its own or lower layers, never higher ones.
var layers = []struct {
	layer    int
	prefixes []string
}{
	{0, []string{"events", "internal/strictjson", "internal/otelenv", "internal/workers", "internal/replies", "internal/delayline", "internal/eventually", "internal/hosting", "web"}}, // web: the UI's files, importing nothing; internal/hosting: what the runtime lends server/remote
	{1, []string{"fsm", "llm", "tools", "store", "policy"}},
	// config: the file's providers, MCP servers and agents; spec: what a
	// session is made from; store/storetest: the stores' conformance
	// suite, which reads migrated sessions' settings as spec does.
	{2, []string{"plugins", "config", "spec", "store/storetest"}},
	{3, []string{"actors"}},
	{4, []string{"placement", "metrics", "tracing"}}, // placement spawns the session actors; metrics and tracing implement actors.Observer, actors.Tracer
	{5, []string{""}},                                // the root package tack
	{6, []string{"server", "cluster", "cmd", "internal", "examples"}},
}

const module = "github.com/tack-run/tack"

// layerOf returns the layer of a package path inside the module.
func layerOf(pkg string) int {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	best, bestLen := -1, -1
	for _, l := range layers {
		for _, p := range l.prefixes {
			if (rel == p || strings.HasPrefix(rel, p+"/") || p == "" && rel == "") && len(p) > bestLen {
				best, bestLen = l.layer, len(p)
			}
		}
	}
	return best
}

// TestImportsFlowOneWay keeps the rule of docs/architecture.md: events ← {fsm, llm,
// tools, store, policy} ← {plugins, config} ← actors ← {placement, metrics} ← tack ← {server, cluster, cmd/tack}.
func TestImportsFlowOneWay(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, from := fields[0], layerOf(fields[0])
		if from < 0 {
			t.Errorf("package %s belongs to no layer of docs/architecture.md", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			checked++
			if to := layerOf(imp); to > from {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must flow down", pkg, from, imp, to)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no module-internal imports were checked")
	}
}

// TestFrontsUseTheRuntime keeps the servers, the cluster and the command
// line on the public API: they reach sessions through the root package
// tack, never through the session actors (actors) or where they are kept
// (placement), so what the runtime checks — grants, limits, ids — is
// never skipped. Tests aside.
func TestFrontsUseTheRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/server/...", module+"/cluster/...", module+"/cmd/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 5 {
		t.Fatalf("only %d packages listed", len(lines))
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			for _, inner := range []string{"actors", "placement"} {
				if p := module + "/" + inner; imp == p || strings.HasPrefix(imp, p+"/") {
					t.Errorf("%s imports %s: use the runtime (package tack) instead", fields[0], imp)
				}
			}
		}
	}
}

// TestHostingIsTheNodes keeps what a runtime lends beyond its public API
// (internal/hosting: its actor system, delivery to a session by id, which
// skips the grants and limits the public API checks) to the package it is
// lent to, server/remote: the root package tack registers it, and nothing
// else imports it. Tests aside.
func TestHostingIsTheNodes(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	hosting, allowed := module+"/internal/hosting", map[string]bool{module: true, module + "/server/remote": true}
	importers := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		for _, imp := range fields[1:] {
			if imp != hosting {
				continue
			}
			importers++
			if !allowed[fields[0]] {
				t.Errorf("%s imports %s, which is server/remote's alone: use the runtime's public API", fields[0], imp)
			}
		}
	}
	if importers != len(allowed) {
		t.Errorf("%d packages import %s, want %d: the root package tack and server/remote", importers, hosting, len(allowed))
	}
}
