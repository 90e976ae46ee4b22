// Package offload is the built-in plugin "large_result_offload": it keeps
// a huge tool result out of the context by writing it to a file and
// committing a preview instead.
//
// On after_tool, a result longer than Config.ThresholdTokens × 4
// characters is written into the session's workspace (plugins.Event's
// Workspace), at .tack/offload/<session>/<call_id>.txt, where the
// session's read_file and shell find it, or, in a runtime whose tools
// have no workspace, to $TMPDIR/tack-offload/<session>/<call_id>.txt
// (directories 0700, file 0600, given to the workspace's owner; the
// session and call ids are reduced to letters, digits, '.', '_' and '-',
// and a second result for the same call id gets "-2", "-3", … rather
// than overwriting the first). The runtime chooses where, never a
// session's configuration, and the file is written through an os.Root of
// the workspace: a link in it that leads out fails the write. The plugin answers
// replace_tool_result, keeping IsError, with the first HeadChars
// characters, a marker line
//
//	[... N characters omitted: the full result is in <path>; read it with read_file or shell (sed -n, head, tail) ...]
//
// and the last TailChars characters, and emits large_result_offloaded
// (tool, call_id, path, bytes: the size of the file). When the file cannot
// be written the result is left as it is and the plugin emits the
// plugin_event "offload_failed" with payload {"tool", "call_id", "error"}.
// Characters are Unicode code points; a cut never splits one.
//
// # Usage
//
// Registered as "large_result_offload" by plugins/builtin; create_session
// configures it:
//
//	{"name": "large_result_offload", "config": {"threshold_tokens": 5000}}
//
// # Concurrency
//
// An instance keeps no state beyond its configuration; the files it
// writes are named so that concurrent sessions sharing a workspace do
// not collide. Handle writes the file synchronously, within the hook budget.
//
// # Testing
//
// Tests give the events a workspace in t.TempDir and call Handle with
// after_tool events.
package offload
