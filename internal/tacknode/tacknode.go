// Package tacknode runs `tack node` processes for tests: started on a
// free loopback port, their stderr kept and searchable, stopped with
// SIGTERM when the test ends or killed with SIGKILL on purpose.
package tacknode

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tack-run/tack/internal/eventually"
)

// Wait bounds every wait of this package.
const Wait = 10 * time.Second

// Node is a `tack node` (or `tack serve`) process.
type Node struct {
	// Addr is where its protoactor remote listens (for `tack serve`, its
	// HTTP server).
	Addr string
	// name is the subcommand.
	name string

	cmd  *exec.Cmd
	mu   sync.Mutex
	log  []string
	done chan struct{}
}

var (
	listening = regexp.MustCompile(`tack node: listening on (\S+)`)
	serving   = regexp.MustCompile(`tack serve: listening on http://(\S+)`)
)

// Start runs bin (a tack binary) as `tack node --listen 127.0.0.1:0`
// followed by args, and returns once it listens; it is stopped (SIGTERM)
// when the test ends.
func Start(t testing.TB, bin string, args ...string) *Node {
	t.Helper()
	n, err := TryStart(t, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TryStart is Start, but a node that exits before it listens is an error
// (carrying what it wrote) for the caller to judge, not the test's end.
func TryStart(t testing.TB, bin string, args ...string) (*Node, error) {
	t.Helper()
	return start(t, bin, listening, append([]string{"node", "--listen", "127.0.0.1:0"}, args...))
}

// Serve runs bin as `tack serve --addr 127.0.0.1:0 --ui=false` followed
// by args, and returns once it listens (Addr is its HTTP HOST:PORT); it
// is stopped (SIGTERM) when the test ends.
func Serve(t testing.TB, bin string, args ...string) *Node {
	t.Helper()
	n, err := start(t, bin, serving, append([]string{"serve", "--addr", "127.0.0.1:0", "--ui=false"}, args...))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// start runs bin with args and waits for the line listening names the
// address in; a process that exits first is an error.
func start(t testing.TB, bin string, listening *regexp.Regexp, args []string) (*Node, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n := &Node{name: "tack " + args[0], cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		defer close(n.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			n.mu.Lock()
			n.log = append(n.log, line)
			n.mu.Unlock()
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]: // the first; a member that rejoins says it again
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		n.Stop(t)
		if t.Failed() {
			t.Logf("%s %s wrote (the last %d lines):\n%s", n.name, n.Addr, failLines, n.tail(failLines))
		}
	})
	select {
	case n.Addr = <-addr:
	case <-n.done:
		_ = cmd.Wait()
		return nil, fmt.Errorf("%s exited: %v", n.name, n.Log())
	case <-time.After(Wait):
		t.Fatalf("%s did not listen: %v", n.name, n.Log())
	}
	return n, nil
}

// Stop ends the node with SIGTERM and waits for it; a node that is gone
// already is left as it is.
func (n *Node) Stop(t testing.TB) {
	if n.cmd.ProcessState != nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	<-n.done
	if err := n.cmd.Wait(); err != nil {
		t.Errorf("%s: %v\n%s", n.name, err, n.Log())
	}
}

// Running reports whether the node's process has not ended (its stderr
// is still open).
func (n *Node) Running() bool {
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// Kill ends the node with SIGKILL, as a crash would, and waits for it.
func (n *Node) Kill() {
	if n.cmd.ProcessState != nil {
		return
	}
	_ = n.cmd.Process.Kill()
	<-n.done
	_ = n.cmd.Wait()
}

// failLines is how much of each node's log a failed test shows.
const failLines = 200

// tail is the last k lines the node wrote on stderr.
func (n *Node) tail(k int) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.log[max(0, len(n.log)-k):], "\n")
}

// Log is what the node wrote on stderr so far.
func (n *Node) Log() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.log, "\n")
}

// Pause stops the node with SIGSTOP, as a stall would (a long GC pause,
// a starved machine), until Resume, and returns once every thread of it
// has stopped. The kernel stops a process only when one of its threads
// takes the signal: on a busy machine the thread it chose may wait for a
// CPU for milliseconds while the others run on, answering what is sent
// to the node meanwhile (a test that stalls a member and prompts it saw
// the prompt answered 4 ms later, the process still R).
func (n *Node) Pause(t testing.TB) {
	t.Helper()
	if err := n.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("%s: SIGSTOP: %v", n.name, err)
	}
	eventually.Within(t, Wait, func() error {
		states := n.threadStates()
		for _, st := range states {
			if st != "T" {
				return fmt.Errorf("%s: after SIGSTOP its threads are %q, not all T (stopped)", n.name, states)
			}
		}
		if len(states) == 0 {
			return fmt.Errorf("%s: its threads cannot be read from /proc", n.name)
		}
		return nil
	})
}

// threadStates is the state of each thread of the node's process (the
// third field of /proc/PID/task/TID/stat).
func (n *Node) threadStates() []string {
	dir := fmt.Sprintf("/proc/%d/task", n.cmd.Process.Pid)
	tasks, _ := os.ReadDir(dir)
	var states []string
	for _, task := range tasks {
		states = append(states, statState(dir+"/"+task.Name()+"/stat"))
	}
	return states
}

// State is the node's process state as Linux tells it (the third field
// of /proc/PID/stat: R running, S sleeping, T stopped...), "" where it
// cannot be read: a test that pauses a node can say whether it stayed
// paused.
func (n *Node) State() string { return statState(fmt.Sprintf("/proc/%d/stat", n.cmd.Process.Pid)) }

// statState is the state field of a /proc stat file, "" where it cannot
// be read.
func statState(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	// The command name, in parentheses, may hold spaces.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 {
		if f := strings.Fields(string(b[i+1:])); len(f) > 0 {
			return f[0]
		}
	}
	return ""
}

// Resume continues a paused node with SIGCONT.
func (n *Node) Resume() { _ = n.cmd.Process.Signal(syscall.SIGCONT) }

// WaitLog waits for a log line that contains all of parts, and returns it.
func (n *Node) WaitLog(t testing.TB, parts ...string) string {
	t.Helper()
	return n.WaitLogSince(t, 0, parts...)
}

// Lines counts the log lines so far: a mark for WaitLogSince.
func (n *Node) Lines() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.log)
}

// WaitLogSince waits for a log line, from line mark on (a count of Lines
// before), that contains all of parts, and returns it.
func (n *Node) WaitLogSince(t testing.TB, mark int, parts ...string) string {
	t.Helper()
	return n.WaitLogWithin(t, Wait, mark, parts...)
}

// WaitLogWithin is WaitLogSince for up to d rather than Wait, for what
// takes longer by design.
func (n *Node) WaitLogWithin(t testing.TB, d time.Duration, mark int, parts ...string) string {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if l, ok := n.find(mark, parts); ok {
			return l
		}
	}
	t.Fatalf("no log line with %q:\n%s", parts, n.Log())
	return ""
}

// LastLog is the last log line that contains all of parts, if any.
func (n *Node) LastLog(parts ...string) (string, bool) { return n.find(0, parts) }

// find is the last log line from line mark on that contains all of parts.
func (n *Node) find(mark int, parts []string) (string, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i := len(n.log) - 1; i >= mark; i-- {
		if containsAll(n.log[i], parts) {
			return n.log[i], true
		}
	}
	return "", false
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
