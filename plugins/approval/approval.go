package approval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

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

// isSafe reports whether cmd is plain (see split) and starts with a safe
// command, word for word. Its first word must be a name, not a path: sh
// runs a word holding "/" as that file, whatever it starts with.
func (p *plugin) isSafe(cmd string) bool {
	words, plain := split(cmd)
	if !plain || len(words) == 0 || strings.Contains(words[0], "/") {
		return false
	}
	for _, prefix := range p.safe {
		if hasPrefix(words, prefix) {
			return true
		}
	}
	return false
}

// hint is the one-line description of a call: "tool: detail", runs of
// spaces and tabs collapsed to one space, every other character a person
// could not see or tell from a space (line breaks, other control
// characters, Unicode spaces, format characters) written as an escape
// ("\n", "\v", "\u00a0"), cut at maxHint characters with the count of
// those cut ("… [+42 chars]"). The person approving sees what sh would
// run, not a look-alike: "echo ok\nrm -rf ~" is two commands.
func hint(tool, detail string) string {
	var b strings.Builder
	b.WriteString(tool)
	b.WriteString(": ")
	gap := false
	for _, r := range strings.Trim(detail, " \t") {
		switch {
		case r == ' ' || r == '\t':
			gap = true
			continue
		case gap:
			b.WriteByte(' ')
			gap = false
		}
		if visible(r) {
			b.WriteRune(r)
		} else {
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	h := []rune(b.String())
	if len(h) <= maxHint {
		return string(h)
	}
	return fmt.Sprintf("%s… [+%d chars]", string(h[:maxHint]), len(h)-maxHint)
}

// visible reports whether r shows as itself: printable ASCII, or a
// graphic character that is not a space.
func visible(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 0x20 && r < 0x7f
	}
	return r != utf8.RuneError && unicode.IsGraphic(r) && !unicode.IsSpace(r)
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
