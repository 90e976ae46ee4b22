package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/tack-run/tack/tools"
)

// DefaultMaxOutput is how much of a command's output the shell tool keeps
// by default (head and tail) and streams as updates.
const DefaultMaxOutput = 256 << 10

// waitDelay bounds how long the shell tool keeps reading output once the
// command has exited or been cancelled, in case a process that left the
// process group still holds it open.
const waitDelay = 500 * time.Millisecond

const shellSchema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "minLength": 1, "description": "The command line, run with sh -c."}
  },
  "required": ["command"],
  "additionalProperties": false
}`

// ShellOption configures the tool returned by [Shell].
type ShellOption func(*shellConfig)

type shellConfig struct {
	dir       string
	maxOutput int
}

// WithDir runs commands in dir instead of the process's working directory.
func WithDir(dir string) ShellOption {
	return func(c *shellConfig) { c.dir = dir }
}

// WithMaxOutput sets how many bytes of output the result keeps (the first
// and last halves, with a marker between) and how many are streamed as
// updates; n <= 0 means [DefaultMaxOutput].
func WithMaxOutput(n int) ShellOption {
	return func(c *shellConfig) {
		if n <= 0 {
			n = DefaultMaxOutput
		}
		c.maxOutput = n
	}
}

// Shell returns the killable tool "shell". It runs `sh -c <command>` in a
// process group of its own, streams the combined stdout and stderr through
// update line by line, and answers with that output (capped). A non-zero
// exit gives an error whose text is the output followed by "exit status N".
// On cancellation the whole process group is SIGKILLed, so no child
// survives, and the command is waited for.
func Shell(opts ...ShellOption) tools.Tool {
	cfg := shellConfig{maxOutput: DefaultMaxOutput}
	for _, o := range opts {
		o(&cfg)
	}
	return tools.Define(tools.Spec{
		Name:        "shell",
		Description: "Run a command line with sh -c and return its combined standard output and error. A non-zero exit status is reported as an error together with the output.",
		Schema:      json.RawMessage(shellSchema),
		Kind:        tools.Killable,
	}, cfg.run)
}

func (c shellConfig) run(ctx context.Context, args json.RawMessage, update func(string)) (string, error) {
	var a struct {
		Command string `json:"command"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return "", err
	}
	if a.Command == "" {
		return "", errors.New("invalid arguments: command is empty")
	}
	if c.dir != "" {
		// exec reports a missing directory as a missing sh; say what it is.
		if _, err := os.Stat(c.dir); err != nil {
			return "", fmt.Errorf("shell: working directory: %w", err)
		}
	}
	buf := newCappedBuffer(c.maxOutput)
	stream := &lineStreamer{update: update, budget: c.maxOutput}
	out := &teeWriter{buf: buf, stream: stream}

	cmd := exec.CommandContext(ctx, "sh", "-c", a.Command)
	cmd.Dir = c.dir
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = waitDelay
	killGroupOnCancel(cmd)
	err := cmd.Run()
	stream.flush()
	output := buf.String()

	if ctxErr := ctx.Err(); ctxErr != nil && err != nil {
		return "", fmt.Errorf("%scommand cancelled: %w", withNewline(output), ctxErr)
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return output, nil
	case errors.Is(err, exec.ErrWaitDelay):
		return withNewline(output) + "[stopped reading: a background process kept the output open]", nil
	case errors.As(err, &exitErr):
		return "", fmt.Errorf("%s%w", withNewline(output), exitErr)
	default:
		return "", fmt.Errorf("%sshell: %w", withNewline(output), err)
	}
}

// withNewline returns s followed by a newline if it is not empty and does
// not end with one already.
func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
