package main

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/tack-run/tack/bench/internal/measure"
)

// Markers delimit the generated part of docs/benchmarks.md.
const (
	heading     = "## Against peer runtimes"
	beginMarker = "<!-- bench/run:begin -->"
	endMarker   = "<!-- bench/run:end -->"
)

//go:embed section.md.tmpl
var sectionTmpl string

func main() {
	results := flag.String("results", "", "directory with raw.jsonl and params")
	doc := flag.String("doc", "", "markdown file to update (default: print to stdout)")
	flag.Parse()
	if *results == "" {
		fmt.Fprintln(os.Stderr, "report: -results is required")
		os.Exit(2)
	}
	if err := run(*results, *doc); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(results, doc string) error {
	recs, err := load(filepath.Join(results, "raw.jsonl"))
	if err != nil {
		return err
	}
	params, err := loadParams(filepath.Join(results, "params"))
	if err != nil {
		return err
	}
	d := newData(recs)
	view := map[string]any{
		"P":          params,
		"Date":       time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		"Machine":    machine(),
		"Versions":   versions(d, params["TACK_VERSION"]),
		"Turns":      d.turnsTable("turns"),
		"HTTPTurns":  d.turnsTable("http-turns"),
		"Abort":      d.abortTable("none"),
		"AbortStub":  d.abortTable("stubborn"),
		"Steer":      d.steerTable(),
		"Idle":       d.idleTable(),
		"Throughput": d.throughputTable(),
		"Turns1000":  d.turns1000Table(),
		"SSEEvents":  d.sseEventsTable(),
		"SSEAbort":   d.sseAbortTable(),
	}
	t, err := template.New("section").Option("missingkey=error").Parse(sectionTmpl)
	if err != nil {
		return err
	}
	var body bytes.Buffer
	if err := t.Execute(&body, view); err != nil {
		return err
	}
	if doc == "" {
		_, err := os.Stdout.Write(body.Bytes())
		return err
	}
	return splice(doc, body.String())
}

// load reads every driver's JSON lines.
func load(path string) ([]measure.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []measure.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r measure.Record
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// loadParams reads KEY=VALUE lines.
func loadParams(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			p[k] = v
		}
	}
	return p, nil
}

// machine describes the host: CPU model, cores, memory, kernel.
func machine() map[string]string {
	m := map[string]string{"CPU": "unknown", "Cores": strconv.Itoa(runtime.NumCPU()), "Memory": "unknown", "Kernel": runtime.GOOS}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m["CPU"] = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
					m["Memory"] = fmt.Sprintf("%.1f GiB", kb/(1<<20))
				}
			}
		}
	}
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		m["Kernel"] = strings.TrimSpace(string(out))
	}
	return m
}

// versions names every runtime's version, from the drivers' meta lines
// and, for Tack, the commit bench/run built (tack), else git's HEAD.
func versions(d *data, tack string) map[string]string {
	v := map[string]string{"Tack": tack, "Go": "unknown", "Node": "unknown", "Eino": "unknown", "Pi": "unknown"}
	if tack == "" {
		v["Tack"] = "unknown"
		if out, err := exec.Command("git", "-C", "..", "describe", "--always", "--dirty", "--abbrev=12").Output(); err == nil {
			v["Tack"] = strings.TrimSpace(string(out))
		}
	}
	for _, r := range d.meta {
		switch r.Runtime {
		case "tack":
			v["Go"] = r.Meta["lang"]
		case "eino":
			v["Eino"] = r.Meta["version"]
		case "pi":
			v["Pi"] = r.Meta["version"]
			v["Node"] = strings.TrimPrefix(r.Meta["lang"], "node ")
		}
	}
	return v
}

// splice writes section between the markers of doc, leaving the rest of
// the file as it is.
func splice(doc, section string) error {
	generated := beginMarker + "\n" + strings.TrimSpace(section) + "\n" + endMarker
	old, err := os.ReadFile(doc)
	switch {
	case os.IsNotExist(err):
		return os.WriteFile(doc, []byte(heading+"\n\n"+generated+"\n"), 0o644)
	case err != nil:
		return err
	}
	text := string(old)
	begin, end := strings.Index(text, beginMarker), strings.Index(text, endMarker)
	if begin < 0 || end < begin {
		sep := "\n"
		if !strings.HasSuffix(text, "\n") {
			sep = "\n\n"
		}
		return os.WriteFile(doc, []byte(text+sep+heading+"\n\n"+generated+"\n"), 0o644)
	}
	return os.WriteFile(doc, []byte(text[:begin]+generated+text[end+len(endMarker):]), 0o644)
}
