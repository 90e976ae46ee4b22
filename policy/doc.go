// Package policy says what each user of a shared runtime may use and how
// much: grants (which models, tools and scripts) and limits (how many
// sessions and runs at once, how many requests a minute). tack serve
// reads both from its --auth file; the runtime (tack.WithPolicy) checks
// every name a session is given against its owner's grant, whatever the
// transport, and the HTTP server applies the limits.
//
// # Usage
//
//	p := &policy.Policy{
//		Grants: policy.Grants{"*": {Tools: []string{"echo", "read_file"}}, "alice": {Tools: []string{"*"}}},
//		Limits: policy.Limits{"*": {MaxSessions: 20, RequestsPerMinute: 600}},
//	}
//	g := p.Grant("bob")
//	g.Tool("shell")   // false: bob has the "*" entry's tools
//	g.Model("openai/gpt-4o") // true: models absent from both entries take the default
//
// # Rules
//
// A user's entry overrides the "*" entry key by key; a key absent from
// both takes the default: every configured model, scripts allowed, every
// tool but shell and the tools of MCP servers. Names and patterns match
// whole names; '*' in a pattern matches any run of characters, '/'
// included. An MCP server's group name "mcp:<server>" is granted by a
// pattern that names it, or by one that covers every tool of the server
// ("<server>/*", "*"). A nil *Grant allows everything: the one local user
// of tack rpc, chat and demo.
//
// # Concurrency
//
// A Policy and its Grants are read-only once built and safe for
// concurrent use.
package policy
