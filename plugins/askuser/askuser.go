package askuser

import (
	"encoding/json"
	"errors"

	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/tools"
)

// plugin is one session's instance.
type plugin struct {
	cfg Config
}

func (p *plugin) Name() string          { return Name }
func (p *plugin) Priority() int         { return p.cfg.Priority }
func (p *plugin) Hooks() []plugins.Hook { return []plugins.Hook{plugins.BeforeTool} }

// Tools returns the ask_user tool.
func (p *plugin) Tools() []tools.Tool { return []tools.Tool{Tool()} }

// Handle turns a call to ask_user into a question.
func (p *plugin) Handle(ev *plugins.Event) []plugins.Action {
	if ev.Hook != plugins.BeforeTool || ev.Call.GetName() != ToolName {
		return nil
	}
	var a struct {
		Question string   `json:"question"`
		Options  []string `json:"options"`
	}
	if err := json.Unmarshal(ev.Call.GetArgs().GetJson(), &a); err != nil || a.Question == "" {
		if err == nil {
			err = errors.New("question is empty")
		}
		return []plugins.Action{{Kind: plugins.BlockTool, Reason: "invalid arguments: " + err.Error()}}
	}
	return []plugins.Action{{Kind: plugins.Ask, Text: a.Question, Options: a.Options}}
}
