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
	"github.com/tack-run/tack/tools/output"
	"github.com/tack-run/tack/tools/sandbox"
)

// DefaultMaxOutput is how much of a command's output the shell tool keeps
// by default (head and tail: 1 MiB) and streams as updates.
const DefaultMaxOutput = output.DefaultLimit

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
	ws        tools.Workspace
	sandbox   *sandbox.Sandbox
	maxOutput int
}

// WithDir runs commands in dir instead of the process's working directory.
func WithDir(dir string) ShellOption {
	return func(c *shellConfig) { c.dir = dir }
}

// WithWorkspace runs each call's command in the workspace of its
// session (ws.Dir), instead of a fixed directory.
func WithWorkspace(ws tools.Workspace) ShellOption {
	return func(c *shellConfig) { c.ws = ws }
}

// WithSandbox runs commands in sb (docs/sandbox.md): the workspace is
// the only place they may write. Where no sandbox can be had, a call's
// result is an error beginning "sandbox unavailable:". Without this
// option commands run as this process does.
func WithSandbox(sb *sandbox.Sandbox) ShellOption {
	return func(c *shellConfig) { c.sandbox = sb }
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
	dir := c.dir
	if c.ws != nil {
		var err error
		if dir, err = c.ws.Dir(ctx); err != nil {
			return "", err
		}
	}
	if dir != "" {
		// exec reports a missing directory as a missing sh; say what it is.
		if _, err := os.Stat(dir); err != nil {
			return "", fmt.Errorf("shell: working directory: %w", err)
		}
	}
	out := output.New(c.maxOutput, update)

	cmd, done, err := c.command(ctx, dir, a.Command)
	if err != nil {
		return "", err
	}
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = waitDelay
	err = cmd.Run()
	done()
	out.Flush()
	output := out.String()

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

// command returns the command that runs line in dir, sandboxed or not.
func (c shellConfig) command(ctx context.Context, dir, line string) (*exec.Cmd, func(), error) {
	if c.sandbox != nil {
		return c.sandbox.Command(ctx, dir, line)
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = dir
	killGroupOnCancel(cmd)
	return cmd, func() {}, nil
}

// withNewline returns s followed by a newline if it is not empty and does
// not end with one already.
func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
