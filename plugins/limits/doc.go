// Package limits is the built-in plugin "limits": it ends a run cleanly
// when it has made too many turns or spent too many tokens or dollars.
//
// On before_request it reads Event.Usage, what the run and the session
// have spent before the request about to be made, and answers abort
// (reason "limit_reached", Text naming the limit: "max_turns of 100
// reached in run r-3") when a limit is reached:
//
//   - max_turns: Usage.RunTurns, the turns the run has already made, is at
//     least MaxTurns — the request would start turn MaxTurns+1. A run with
//     max_turns 2 makes exactly two requests.
//   - max_run_tokens, max_run_cost_usd: Usage.RunTokens or RunCostUSD is at
//     least the limit.
//   - max_session_tokens, max_session_cost_usd: Usage.SessionTokens or
//     SessionCostUSD is at least the limit.
//
// Spending is only known after a response, so a run may go past a token or
// dollar limit by its last response; it never starts another request.
// The limits are checked in the order above and the first reached is
// named. 0 means no limit. Because the check comes before a request, the
// abort never cuts a tool batch or a stream, and the history stays valid.
//
// # Usage
//
// Registered as "limits" by plugins/builtin; create_session configures it:
//
//	{"name": "limits", "config": {"max_turns": 20, "max_run_cost_usd": 0.5}}
//
// # Concurrency
//
// An instance keeps no state beyond its configuration; Handle is safe to
// call from any goroutine.
//
// # Testing
//
// Tests call Handle with before_request events carrying a Usage.
package limits
