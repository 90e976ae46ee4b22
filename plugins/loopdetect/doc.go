// Package loopdetect is the built-in plugin "loop_detection": it notices a
// model that keeps making the same tool calls and tells it, then stops the
// run if it does not listen.
//
// On after_tool it compares each call with the calls just before it in the
// same run. Two calls are the same when they name the same tool with the
// same arguments, compared as canonical JSON (key order and spacing do not
// matter). It counts two patterns, both over the calls that ended last,
// in the order they ended:
//
//   - repeat: the same call N times in a row (A A A);
//   - alternation: two different calls taking turns, N calls in all
//     (A B A B is 4); it is reported from 4 calls on, whatever the
//     threshold.
//
// When a count reaches Config.Threshold, and at every further call of the
// pattern, the plugin emits loop_detected (kind "repeat" or "alternation",
// tool, count) and intervenes with a message to the model. When a count
// reaches Config.AbortAt it emits loop_detected and aborts the run with
// reason "loop_detected". Any other call breaks the pattern and its count
// starts again. The counts are per run: they are cleared when an event
// comes with a RunID other than the last one seen.
//
// # Usage
//
// Registered as "loop_detection" by plugins/builtin; create_session
// configures it:
//
//	{"name": "loop_detection", "config": {"threshold": 3, "abort_at": 6}}
//
// # Concurrency
//
// An instance keeps the counts of one session and is not safe for
// concurrent use; the chain calls Handle from one goroutine at a time.
//
// # Testing
//
// Tests feed after_tool events to Handle and compare the actions.
package loopdetect
