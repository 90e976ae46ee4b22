package offload

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
)

// plugin is one session's instance.
type plugin struct {
	cfg Config
}

func (p *plugin) Name() string          { return Name }
func (p *plugin) Priority() int         { return p.cfg.Priority }
func (p *plugin) Hooks() []plugins.Hook { return []plugins.Hook{plugins.AfterTool} }

// Handle offloads a result over the threshold.
func (p *plugin) Handle(ev *plugins.Event) []plugins.Action {
	if ev.Hook != plugins.AfterTool || ev.Call == nil || ev.Result == nil {
		return nil
	}
	content, limit := ev.Result.Content, p.cfg.ThresholdTokens*CharsPerToken
	if len(content) <= limit { // never more characters than bytes
		return nil
	}
	n := utf8.RuneCountInString(content)
	if n <= limit {
		return nil
	}
	tool, id := ev.Call.GetName(), ev.Call.GetId()
	path, err := offload(ev, content)
	if err != nil {
		payload, _ := json.Marshal(map[string]string{"tool": tool, "call_id": id, "error": err.Error()})
		return []plugins.Action{{Kind: plugins.Emit, Name: "offload_failed", Payload: payload}}
	}
	head, tail := headOf(content, p.cfg.HeadChars), tailOf(content, p.cfg.TailChars)
	marker := fmt.Sprintf("[... %d characters omitted: the full result is in %s; read it with read_file or shell (sed -n, head, tail) ...]",
		n-p.cfg.HeadChars-p.cfg.TailChars, path)
	return []plugins.Action{
		{Kind: plugins.ReplaceToolResult, Result: head + "\n" + marker + "\n" + tail, IsError: ev.Result.IsError},
		{Kind: plugins.Emit, Event: &eventsv1.LargeResultOffloaded{Tool: tool, CallId: id, Path: path, Bytes: int64(len(content))}},
	}
}

// headOf returns the first n characters of s.
func headOf(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// tailOf returns the last n characters of s.
func tailOf(s string, n int) string {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}
