package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
)

// runShell runs the shell tool on command with a generous deadline and
// returns its result and the partials it streamed.
func runShell(t *testing.T, shell tools.Tool, command string) (tools.Result, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var (
		mu       sync.Mutex
		partials []string
	)
	args, _ := json.Marshal(map[string]string{"command": command})
	res := tools.Execute(ctx, shell, args, func(p string) {
		mu.Lock()
		defer mu.Unlock()
		partials = append(partials, p)
	})
	mu.Lock()
	defer mu.Unlock()
	return res, slices.Clone(partials)
}

func TestShell(t *testing.T) {
	seq := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(strconv.Itoa(i) + "\n")
		}
		return b.String()
	}(1000)
	dir := t.TempDir()
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		opts    []builtin.ShellOption
		command string
		want    tools.Result
	}{
		{name: "stdout", command: "echo hello", want: tools.Result{Content: "hello\n"}},
		{name: "stdout and stderr interleaved", command: "echo out; echo err >&2; echo out2",
			want: tools.Result{Content: "out\nerr\nout2\n"}},
		{name: "no output", command: "true", want: tools.Result{Content: ""}},
		{name: "no final newline", command: "printf abc", want: tools.Result{Content: "abc"}},
		{name: "non-zero exit", command: "echo oops; exit 3",
			want: tools.Result{Content: "oops\nexit status 3", IsError: true}},
		{name: "non-zero exit without output", command: "exit 1",
			want: tools.Result{Content: "exit status 1", IsError: true}},
		{name: "working directory", opts: []builtin.ShellOption{builtin.WithDir(dir)}, command: "pwd -P",
			want: tools.Result{Content: realDir + "\n"}},
		{name: "missing working directory", opts: []builtin.ShellOption{builtin.WithDir(filepath.Join(dir, "nope"))}, command: "true",
			want: tools.Result{Content: "shell: working directory: stat " + filepath.Join(dir, "nope") + ": no such file or directory", IsError: true}},
		{name: "output capped keeping head and tail", opts: []builtin.ShellOption{builtin.WithMaxOutput(100)}, command: "seq 1 1000",
			want: tools.Result{Content: seq[:50] + "\n[output truncated: 3793 bytes]\n" + seq[len(seq)-50:]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := runShell(t, builtin.Shell(tt.opts...), tt.command)
			if got != tt.want {
				t.Errorf("Execute = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestShellStreams proves that lines reach update while the command runs:
// the command waits for a file that only the update for its first line
// creates.
func TestShellStreams(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "flag")
	command := "echo first; while [ ! -e " + flag + " ]; do sleep 0.01; done; echo second"
	var once sync.Once
	shell := builtin.Shell()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var partials []string
	args, _ := json.Marshal(map[string]string{"command": command})
	res := tools.Execute(ctx, shell, args, func(p string) {
		partials = append(partials, p)
		once.Do(func() {
			if err := os.WriteFile(flag, nil, 0o600); err != nil {
				t.Error(err)
			}
		})
	})
	if want := (tools.Result{Content: "first\nsecond\n"}); res != want {
		t.Errorf("Execute = %+v, want %+v", res, want)
	}
	if want := []string{"first\n", "second\n"}; !slices.Equal(partials, want) {
		t.Errorf("partials = %q, want %q", partials, want)
	}
}

func TestShellStreamBudget(t *testing.T) {
	_, partials := runShell(t, builtin.Shell(builtin.WithMaxOutput(10)), "seq 1 100")
	want := []string{"1\n", "2\n", "3\n", "4\n", "5\n", "[further output is not streamed; it is in the result]\n"}
	if !slices.Equal(partials, want) {
		t.Errorf("partials = %q, want %q", partials, want)
	}
}
