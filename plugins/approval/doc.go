// Package approval is the built-in plugin "approval": it holds calls of
// chosen tools until a person approves or rejects them.
//
// On before_tool, a call to one of Config.Tools answers hold_for_approval
// with a one-line Hint ("shell: rm -rf build"), the command Family an
// "always" approval records, the Timeout and AutoResume. A shell call whose
// command starts with one of Config.SafeCommands, word for word, runs
// without approval — unless the command has a shell operator (; & | ` $(
// < > or a line break), which makes it never safe. The runtime owns what
// follows: the approval_required event, the pending approval, approve,
// reject, timeout, superseded, and the "always" rules, which it checks
// before holding.
//
// Family is what an "always" approval covers, next to the tool name. For a
// shell command it is the first word after any leading VAR=value
// assignments ("FOO=1 rm -rf x" → "rm"); for a command with a shell
// operator it is the whole command, trimmed, so that approving
// "ls; rm -rf /" for always never approves every ls; for other tools it is
// "" (the whole tool).
//
// # Usage
//
// Registered as "approval" by plugins/builtin; create_session configures
// it:
//
//	{"name": "approval", "config": {"tools": ["shell", "write_file"],
//	  "safe_commands": ["ls", "cat", "git status"], "timeout_ms": 60000}}
//
// # Concurrency
//
// A plugin instance keeps no state after New and may be used by one
// session's chain; Handle is safe to call from any goroutine.
//
// # Testing
//
// Tests call Handle with plugins.Event values directly; no chain or
// session is needed.
package approval
