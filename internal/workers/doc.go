// Package workers runs short functions on goroutines that outlive them.
//
// A session's turn starts three goroutines: protoactor's dispatcher starts
// one each time the session's mailbox gets work after being empty, and the
// session starts one per model stream and one per tool call. A new
// goroutine starts with a small stack, and the session's handlers, JSON
// decoding and schema validation run deep enough that every such goroutine
// grew its stack, copying it several times: the CPU profile of the turn
// benchmark put more than a third of a turn there. A Pool hands each
// function to a goroutine that ran one before and kept the stack it grew;
// only when none is idle does it start a new one.
//
// An idle worker waits at most Idle for another function, then exits, so
// a quiet process keeps no goroutines and leak checks (goleak) see none
// shortly after the work is done.
//
// Default, the package's Pool, serves the session actors (as a
// protoactor Dispatcher), their model streams and their tool calls, and
// the OpenAI provider's reading of each response.
package workers
