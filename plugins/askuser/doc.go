// Package askuser is the built-in plugin "ask_user": it gives the model a
// tool, ask_user, to put a question to a person, and turns each call into
// a pending question the runtime holds until the person responds.
//
// The plugin is a plugins.ToolProvider: Tools returns the killable tool
// "ask_user" (arguments: question, a non-empty string; options, an
// optional array of strings). On before_tool, a call to ask_user answers
// ask with Text the question and Options the options; the runtime emits
// ask_user, goes idle, and commits the respond command's answer as the
// call's result. The tool's own Run is never used while the plugin is
// configured; it returns the error "ask_user is answered by a person
// through respond". Arguments that do not parse (schema validation
// normally catches them first) are answered block_tool with the reason.
//
// # Usage
//
// Registered as "ask_user" by plugins/builtin; create_session configures
// it, and the session attaches the tool:
//
//	{"name": "ask_user", "config": {"priority": 10}}
//
// # Concurrency
//
// An instance keeps no state beyond its configuration; Handle and Tools
// are safe to call from any goroutine.
//
// # Testing
//
// Tests call Handle with before_tool events and validate arguments against
// the tool's schema through tools.Set.
package askuser
