package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tack-run/tack/store/postgres/pgtest"
)

// TestExportImportCommands: a session tack rpc made in a SQLite file,
// written by tack export and read by tack import into PostgreSQL, exports
// again as the same document but for its id and time; tack import refuses
// a taken id and a file that is not JSON.
func TestExportImportCommands(t *testing.T) {
	dsn, bin, dir := pgtest.DSN(t), buildTack(t), t.TempDir()
	run := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(ee.Stderr), err
		}
		return string(out), err
	}
	// tack rpc makes the session; stdin stays open until its run ended.
	rpc := exec.Command(bin, "rpc", "--store", "sqlite:a.db")
	rpc.Dir = dir
	stdin, _ := rpc.StdinPipe()
	stdout, _ := rpc.StdoutPipe()
	if err := rpc.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"cmd":"create_session","session":"s1","system":"terse","script":{"turns":[{"text":"Hi."}]}}`+"\n"+
		`{"cmd":"prompt","session":"s1","text":"hello"}`+"\n")
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && !strings.Contains(lines.Text(), `"type":"agent_end"`) {
	}
	stdin.Close()
	if err := rpc.Wait(); err != nil {
		t.Fatalf("tack rpc: %v", err)
	}
	doc, err := run("", "export", "--store", "sqlite:a.db", "-o", "s1.json", "s1")
	if err != nil {
		t.Fatalf("tack export: %v %s", err, doc)
	}
	first, err := os.ReadFile(filepath.Join(dir, "s1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if id, err := run("", "import", "--store", dsn, "--session", "copy", "--user", "local", "s1.json"); err != nil || id != "copy\n" {
		t.Fatalf("tack import: %q %v", id, err)
	}
	second, err := run("", "export", "--store", dsn, "copy")
	if err != nil {
		t.Fatalf("tack export from PostgreSQL: %v %s", err, second)
	}
	stamp := func(doc string) string { // the id and the time differ
		doc = strings.Replace(doc, `"session":"copy"`, `"session":"s1"`, 1)
		i := strings.Index(doc, `"exported_at"`)
		return doc[:i]
	}
	if stamp(string(first)) != stamp(second) || !strings.Contains(second, `{"role":"assistant","content":"Hi."}`) {
		t.Fatalf("the document changed on the way:\n%s\n%s", first, second)
	}
	if out, err := run("", "import", "--store", dsn, "--session", "copy", "s1.json"); err == nil || !strings.Contains(out, `session "copy" exists`) {
		t.Fatalf("an import over a taken id: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run("", "import", "--store", dsn, "bad.json"); err == nil || !strings.Contains(out, "bad.json is not a JSON document") {
		t.Fatalf("an import of a bad file: %v %s", err, out)
	}
}
