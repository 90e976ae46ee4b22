package limits

import (
	"fmt"
	"strconv"

	"github.com/tack-run/tack/plugins"
)

// Reason is the abort reason, and the error event's code, of a reached
// limit.
const Reason = "limit_reached"

// plugin is one session's instance.
type plugin struct {
	cfg Config
}

func (p *plugin) Name() string          { return Name }
func (p *plugin) Priority() int         { return p.cfg.Priority }
func (p *plugin) Hooks() []plugins.Hook { return []plugins.Hook{plugins.BeforeRequest} }

// Handle aborts the run when the request would go past a limit.
func (p *plugin) Handle(ev *plugins.Event) []plugins.Action {
	if ev.Hook != plugins.BeforeRequest {
		return nil
	}
	if text := p.reached(ev); text != "" {
		return []plugins.Action{{Kind: plugins.Abort, Reason: Reason, Text: text}}
	}
	return nil
}

// reached names the first limit reached, or returns "".
func (p *plugin) reached(ev *plugins.Event) string {
	c, u := p.cfg, ev.Usage
	run, session := "in run "+ev.RunID, "in session "+ev.Session
	switch {
	case c.MaxTurns > 0 && u.RunTurns >= c.MaxTurns:
		return fmt.Sprintf("max_turns of %d reached %s", c.MaxTurns, run)
	case c.MaxRunTokens > 0 && u.RunTokens >= c.MaxRunTokens:
		return fmt.Sprintf("max_run_tokens of %d reached %s (%d tokens used)", c.MaxRunTokens, run, u.RunTokens)
	case c.MaxRunCostUSD > 0 && u.RunCostUSD >= c.MaxRunCostUSD:
		return fmt.Sprintf("max_run_cost_usd of %s reached %s ($%.4f spent)", usd(c.MaxRunCostUSD), run, u.RunCostUSD)
	case c.MaxSessionTokens > 0 && u.SessionTokens >= c.MaxSessionTokens:
		return fmt.Sprintf("max_session_tokens of %d reached %s (%d tokens used)", c.MaxSessionTokens, session, u.SessionTokens)
	case c.MaxSessionCostUSD > 0 && u.SessionCostUSD >= c.MaxSessionCostUSD:
		return fmt.Sprintf("max_session_cost_usd of %s reached %s ($%.4f spent)", usd(c.MaxSessionCostUSD), session, u.SessionCostUSD)
	}
	return ""
}

// usd formats a configured dollar amount as written: 0.5, 2, 0.125.
func usd(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
