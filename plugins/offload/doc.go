// Package offload is the built-in plugin "large_result_offload": it keeps
// a huge tool result out of the context by writing it to a file and
// committing a preview instead.
//
// On after_tool, a result longer than Config.ThresholdTokens × 4
// characters is written to <Dir>/<session>/<call_id>.txt (directories
// 0700, file 0600; the session and call ids are reduced to letters,
// digits, '.', '_' and '-', and a second result for the same call id gets
// "-2", "-3", … rather than overwriting the first). The plugin answers
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
//	{"name": "large_result_offload", "config": {"threshold_tokens": 5000, "dir": "/srv/work/.offload"}}
//
// The read_file tool only reads under its root directory: put Dir under
// that root for the model to read the file with it.
//
// # Concurrency
//
// An instance keeps no state beyond its configuration; the files it
// writes are named so that concurrent sessions sharing a Dir do not
// collide. Handle writes the file synchronously, within the hook budget.
//
// # Testing
//
// Tests point Dir at t.TempDir and call Handle with after_tool events.
package offload
