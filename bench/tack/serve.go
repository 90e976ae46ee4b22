package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tack-run/tack/bench/internal/measure"
)

// server is the `tack serve` process of the serve-sse scenario and an
// HTTP client for it.
type server struct {
	cmd    *exec.Cmd
	dir    string
	url    string
	token  string
	client *http.Client
	exited chan struct{}
}

// startServer starts bin as `tack serve` on a free loopback port, with
// the store named (memory, or sqlite: a file in a temporary directory), no UI, no model configuration, the workspaces in a
// temporary directory and --auth: one user, "bench", with a random static
// token, and no limits (the file sets none); it waits until it listens. Its
// stderr goes to the driver's. The process inherits the driver's CPU
// affinity and GOMAXPROCS.
func startServer(bin, store string, conns int) *server {
	if bin == "" {
		measure.Fatal("serve-sse needs --serve, the tack binary")
	}
	raiseFileLimit(conns)
	bin, err := filepath.Abs(bin) // the server runs in a directory of its own
	if err != nil {
		measure.Fatal("%v", err)
	}
	dir, err := os.MkdirTemp("", "tack-bench-serve-")
	if err != nil {
		measure.Fatal("%v", err)
	}
	key := make([]byte, 16)
	rand.Read(key)
	token := "tk_bench_" + hex.EncodeToString(key)
	authFile := filepath.Join(dir, "auth.json")
	if err := os.WriteFile(authFile, fmt.Appendf(nil, `{"tokens": {%q: "bench"}}`, token), 0o600); err != nil {
		measure.Fatal("%v", err)
	}
	switch store {
	case "memory":
	case "sqlite":
		store = "sqlite:" + filepath.Join(dir, "tack.db")
	default:
		measure.Fatal("serve-sse: --store %q: memory or sqlite", store)
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--store", store, "--ui=false",
		"--auth", authFile, "--workspace-root", filepath.Join(dir, "workspaces"))
	// No model configuration: no tack.json where it runs, none named by
	// the environment; the sessions play inline scripts.
	cmd.Dir = dir
	// A driver that fails exits at once (measure.Fatal), and one that
	// hangs is killed by bench/run's timeout: either way the server, which
	// may have a thousand sessions streaming, must not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TACK_CONFIG=") && !strings.HasPrefix(kv, "OPENAI_API_KEY=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		measure.Fatal("%v", err)
	}
	if err := cmd.Start(); err != nil {
		measure.Fatal("start %s: %v", bin, err)
	}
	s := &server{cmd: cmd, dir: dir, token: token, exited: make(chan struct{})}
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(os.Stderr, line)
			if _, url, ok := strings.Cut(line, "tack serve: listening on "); ok {
				listening <- url
			}
		}
		close(s.exited)
	}()
	select {
	case s.url = <-listening:
	case <-s.exited:
		measure.Fatal("tack serve exited before listening: %v", cmd.Wait())
	case <-time.After(measure.Deadline):
		measure.Fatal("tack serve did not listen within %v", measure.Deadline)
	}
	// Every connection kept alive for reuse: the aborts go out on the
	// connections the prompts opened, as clients that keep theirs would.
	s.client = &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: 1 << 16,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}}
	return s
}

// stop stops the server with SIGTERM, as a service manager would, and
// fails unless it exits 0 within measure.Deadline.
func (s *server) stop() {
	s.client.CloseIdleConnections()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		measure.Fatal("stop tack serve: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(measure.Deadline):
		measure.Fatal("tack serve did not stop within %v of SIGTERM", measure.Deadline)
	}
	if err := s.cmd.Wait(); err != nil {
		measure.Fatal("tack serve: %v", err)
	}
	os.RemoveAll(s.dir)
}

// cpu returns the CPU time the server's threads have used, in ns: the
// sum of the first field of each /proc/PID/task/TID/schedstat (Linux).
// Go's threads live as long as the process, so none takes its time away
// by exiting.
func (s *server) cpu() time.Duration {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", s.cmd.Process.Pid))
	if err != nil || len(tasks) == 0 {
		measure.Fatal("server CPU: no /proc/%d/task/*/schedstat (%v)", s.cmd.Process.Pid, err)
	}
	var sum time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that exited since the glob
		}
		ns, err := strconv.ParseInt(string(bytes.Fields(data)[0]), 10, 64)
		if err != nil {
			measure.Fatal("server CPU: %s: %v", t, err)
		}
		sum += time.Duration(ns)
	}
	return sum
}

// do sends a request with a JSON body (none when body is ""), reads the
// answer and fails unless its status is want.
func (s *server) do(method, path, body string, want int) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		measure.Fatal("%v", err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := s.client.Do(req)
	if err != nil {
		measure.Fatal("%s %s: %v", method, path, err)
	}
	answer, err := io.ReadAll(res.Body) // read to the end, so that the connection is reused
	res.Body.Close()
	if err != nil || res.StatusCode != want {
		measure.Fatal("%s %s: %d %s (%v), want %d", method, path, res.StatusCode, answer, err, want)
	}
}

// events opens the event stream of session id; it returns once the
// server has subscribed (it sends the headers after that).
func (s *server) events(id string) io.ReadCloser {
	req, err := http.NewRequestWithContext(context.Background(), "GET", s.url+"/v1/sessions/"+id+"/events", nil)
	if err != nil {
		measure.Fatal("%v", err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := s.client.Do(req)
	if err != nil {
		measure.Fatal("GET events of %s: %v", id, err)
	}
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		answer, _ := io.ReadAll(res.Body)
		measure.Fatal("GET events of %s: %d %s %s", id, res.StatusCode, ct, answer)
	}
	return res.Body
}

// each calls f(0) … f(n-1) from workers goroutines and returns when all
// have returned.
func each(n, workers int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, workers) {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// raiseFileLimit raises the soft limit of open files to the hard one,
// and fails when that is too few for conns connections and some files
// besides: the driver and the server each hold one descriptor per
// connection, and the server inherits the limit (Go raises its own soft
// limit at start-up, but gives the processes it starts the one it found,
// unless the program set one).
func raiseFileLimit(conns int) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		measure.Fatal("open files limit: %v", err)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		measure.Fatal("open files limit: %v", err)
	}
	if need := uint64(conns) + 256; lim.Cur < need {
		measure.Fatal("open files limit %d, and %d connections need %d: raise it (ulimit -n)", lim.Cur, conns, need)
	}
}
