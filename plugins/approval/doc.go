// Package approval is the built-in plugin "approval": it holds calls of
// chosen tools until a person approves or rejects them.
//
// On before_tool, a call to one of Config.Tools answers hold_for_approval
// with a one-line Hint ("shell: rm -rf build"), the command Family an
// "always" approval records, the Timeout and AutoResume. A shell call whose
// command is plain and starts with one of Config.SafeCommands, word for
// word, runs without approval. Plain means what sh would split into the
// same words: words separated by spaces and tabs only, nothing but
// printable ASCII, no shell operator, quote or backslash (; & | < > ( ) {
// } $ ` \ ' "), no line break or other control character; and the first
// word is not a path. Anything else is never safe: strings.Fields would
// split "ls\v/../../bin/sh x" into "ls" and more, but sh runs the one word
// "ls\v/../../bin/sh", a path. The runtime owns what follows: the
// approval_required event, the pending approval, approve, reject, timeout,
// superseded, and the "always" rules, which it checks before holding.
//
// A safe command runs with any further arguments, in the model's
// workspace, which the model can write: name only commands that read
// nothing there they would run (git runs hooks and core.fsmonitor from
// .git/config, make a Makefile, npm package.json's scripts) and that no
// argument makes run something else (find -exec, sed's e command, env).
//
// Family is what an "always" approval covers, next to the tool name. For a
// plain shell command it is the command's name, its first word ("rm -rf
// x" → "rm"); for any other command (not plain, starting with a VAR=value
// assignment, which can change what any command runs, or a name with * ?
// [ ] ~ # !) it is the whole command, trimmed of spaces and tabs, so that
// approving "ls; rm -rf /" or "LD_PRELOAD=./x.so ls" for always never
// approves every ls; for other tools it is "" (the whole tool).
//
// The Hint shows control characters, Unicode spaces and format characters
// as escapes ("\v", "\u00a0"), so that the person approving sees what sh
// would run.
//
// # Usage
//
// Registered as "approval" by plugins/builtin; create_session configures
// it:
//
//	{"name": "approval", "config": {"tools": ["shell", "write_file"],
//	  "safe_commands": ["ls", "cat", "wc -l"], "timeout_ms": 60000}}
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
