//go:build ignore

// Command flaky is .ci/flaky (see its header): it runs go test -json on
// packages N times, optionally beside busy loops, and reports each
// test's failure rate.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "flaky:", err)
		os.Exit(2)
	}
}

// burnFlag is --burn[=K]: 0 is off, -1 one loop per core.
type burnFlag int

func (b *burnFlag) String() string   { return strconv.Itoa(int(*b)) }
func (b *burnFlag) IsBoolFlag() bool { return true }
func (b *burnFlag) Set(s string) error {
	switch s {
	case "true":
		*b = -1
	case "false":
		*b = 0
	default:
		k, err := strconv.Atoi(s)
		if err != nil || k < 0 {
			return fmt.Errorf("--burn=%s: want a number of busy loops", s)
		}
		*b = burnFlag(k)
	}
	return nil
}

func run(args []string) error {
	fs := flag.NewFlagSet("flaky", flag.ContinueOnError)
	n := fs.Int("n", 5, "runs")
	var burn burnFlag
	fs.Var(&burn, "burn", "`K` busy loops beside the tests (--burn alone: one per core)")
	pattern := fs.String("run", "", "go test -run `REGEX`")
	race := fs.Bool("race", false, "go test -race")
	timeout := fs.Duration("timeout", 20*time.Minute, "go test -timeout per run")
	keep := fs.String("keep", "", "`DIR` for each run's -json output (default a new directory under /tmp)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("name the packages, e.g. .ci/flaky -n 10 --burn ./server/remote/...")
	}
	if *n < 1 {
		return fmt.Errorf("-n %d: want at least one run", *n)
	}
	dir := *keep
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "flaky-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	loops := int(burn)
	if loops < 0 {
		loops = runtime.NumCPU()
	}
	stop := burner(loops)
	defer stop()

	goArgs := []string{"test", "-json", "-count=1", "-p", "1", "-timeout", timeout.String()}
	if *race {
		goArgs = append(goArgs, "-race")
	}
	if *pattern != "" {
		goArgs = append(goArgs, "-run", *pattern)
	}
	goArgs = append(goArgs, fs.Args()...)
	fmt.Printf("flaky: %d runs of go %s, %d busy loops; output in %s\n", *n, strings.Join(goArgs, " "), loops, dir)

	tally := map[string]*count{}
	failed := false
	for i := 1; i <= *n; i++ {
		out := filepath.Join(dir, fmt.Sprintf("run-%02d.json", i))
		start := time.Now()
		res, err := once(goArgs, out)
		if err != nil {
			return err
		}
		for name, ok := range res {
			c := tally[name]
			if c == nil {
				c = &count{}
				tally[name] = c
			}
			c.runs++
			if !ok {
				c.fails++
			}
		}
		var bad []string
		for name, ok := range res {
			if !ok {
				bad = append(bad, name)
			}
		}
		sort.Strings(bad)
		status := "ok"
		if len(bad) > 0 {
			status = "FAIL " + strings.Join(bad, " ")
			failed = true
		}
		fmt.Printf("run %d/%d: %s in %s (%s)\n", i, *n, status, time.Since(start).Round(time.Second), out)
	}
	report(os.Stdout, tally)
	if failed {
		os.Exit(1)
	}
	return nil
}

// count is a test's runs and failures.
type count struct{ runs, fails int }

// event is a line of go test -json.
type event struct {
	Action  string
	Package string
	Test    string
}

// once runs go with args, keeps its output in out, and returns whether
// each test passed, keyed "package Test" ("package" alone for the
// package itself: a build failure, a panic, a timeout, TestMain).
func once(args []string, out string) (map[string]bool, error) {
	f, err := os.Create(out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command("go", args...)
	cmd.Stderr = f
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	res := parse(io.TeeReader(stdout, f))
	_ = cmd.Wait() // the failures are in the events
	return res, nil
}

// parse reads go test -json events. A test still running when its
// package ends failed with it (a panic or a timeout ends the process).
func parse(r io.Reader) map[string]bool {
	res := map[string]bool{}
	running := map[string]map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var ev event
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Package == "" {
			continue
		}
		key := ev.Package
		if ev.Test != "" {
			key += " " + ev.Test
		}
		switch ev.Action {
		case "run":
			if running[ev.Package] == nil {
				running[ev.Package] = map[string]bool{}
			}
			running[ev.Package][key] = true
		case "pass":
			delete(running[ev.Package], key)
			res[key] = true
		case "skip":
			delete(running[ev.Package], key)
		case "fail":
			delete(running[ev.Package], key)
			res[key] = false
			if ev.Test == "" {
				for t := range running[ev.Package] {
					res[t] = false
				}
				delete(running, ev.Package)
			}
		}
	}
	return res
}

// report prints the tally: failing tests first, by rate, then a count of
// those that never failed.
func report(w io.Writer, tally map[string]*count) {
	var names []string
	passed := 0
	for name, c := range tally {
		if c.fails > 0 {
			names = append(names, name)
		} else {
			passed++
		}
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := tally[names[i]], tally[names[j]]
		ra, rb := float64(a.fails)/float64(a.runs), float64(b.fails)/float64(b.runs)
		if ra != rb {
			return ra > rb
		}
		return names[i] < names[j]
	})
	fmt.Fprintln(w, "\nfailures  runs  rate  test")
	for _, name := range names {
		c := tally[name]
		fmt.Fprintf(w, "%8d  %4d  %3.0f%%  %s\n", c.fails, c.runs, 100*float64(c.fails)/float64(c.runs), name)
	}
	fmt.Fprintf(w, "%d tests and packages never failed\n", passed)
}

// burner starts k busy loops and returns what stops them.
func burner(k int) (stop func()) {
	var done atomic.Bool
	for range k {
		go func() {
			runtime.LockOSThread()
			for x := 0; !done.Load(); x++ {
			}
		}()
	}
	return func() { done.Store(true) }
}
