package approval

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/tack-run/tack/plugins"
)

// maxHint caps the length of a hint, in characters.
const maxHint = 200

// plugin is one session's instance.
type plugin struct {
	cfg     Config
	tools   map[string]bool
	safe    [][]string
	timeout time.Duration
}

func (p *plugin) Name() string          { return Name }
func (p *plugin) Priority() int         { return p.cfg.Priority }
func (p *plugin) Hooks() []plugins.Hook { return []plugins.Hook{plugins.BeforeTool} }

// Handle holds a call to a listed tool unless it is a safe shell command.
func (p *plugin) Handle(ev *plugins.Event) []plugins.Action {
	if ev.Hook != plugins.BeforeTool || ev.Call == nil || !p.tools[ev.Call.GetName()] {
		return nil
	}
	name, args := ev.Call.GetName(), ev.Call.GetArgs().GetJson()
	hold := plugins.Action{Kind: plugins.HoldForApproval, Timeout: p.timeout, AutoResume: p.cfg.AutoResume}
	if name != shellTool {
		hold.Hint = hint(name, compactJSON(args))
		return []plugins.Action{hold}
	}
	cmd, ok := shellCommand(args)
	if !ok {
		// Not a command we can read (schema validation normally stops
		// this earlier): hold it, and let "always" cover only these args.
		hold.Hint = hint(name, compactJSON(args))
		hold.Family = compactJSON(args)
		return []plugins.Action{hold}
	}
	if p.isSafe(cmd) {
		return nil
	}
	hold.Hint = hint(name, cmd)
	hold.Family = family(cmd)
	return []plugins.Action{hold}
}

// isSafe reports whether cmd starts with a safe command, word for word,
// and has no shell operator.
func (p *plugin) isSafe(cmd string) bool {
	if compound(cmd) {
		return false
	}
	words := strings.Fields(cmd)
	for _, prefix := range p.safe {
		if hasPrefix(words, prefix) {
			return true
		}
	}
	return false
}

// hint is the one-line description of a call: "tool: detail", whitespace
// collapsed, cut at maxHint characters.
func hint(tool, detail string) string {
	h := tool + ": " + strings.Join(strings.Fields(detail), " ")
	if r := []rune(h); len(r) > maxHint {
		h = string(r[:maxHint-1]) + "…"
	}
	return h
}

// shellCommand reads the command of a shell call's arguments.
func shellCommand(args json.RawMessage) (string, bool) {
	var a struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal(args, &a); err != nil || strings.TrimSpace(a.Command) == "" {
		return "", false
	}
	return a.Command, true
}

// compactJSON returns args without insignificant space, or as they are
// when they are not JSON.
func compactJSON(args json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, args); err != nil {
		return string(args)
	}
	return b.String()
}
