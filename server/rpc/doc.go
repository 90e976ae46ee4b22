// Package rpc serves Tack's JSON-lines protocol (docs/protocol.md): one
// command per input line, one JSON object per output line — the responses
// and every event of every session the connection created.
//
// # Usage
//
//	err := rpc.Serve(ctx, rt, os.Stdin, os.Stdout, rpc.WithMaxLineBytes(1<<20))
//
// # Input
//
// Every line but an empty one gets exactly one response. The line's cmd
// and id are taken off its object, and session too unless the command has
// a field of that name (create_session); what remains must be the
// command's fields and nothing else. decodeCommand, which takes a command
// name and such an object, does all decoding and validation, so that a
// server with another framing can share it. A field the command does not
// define is bad_request naming the command and the path
// (`unknown field "cfg" in create_session.plugins[0]`). A line longer than
// the limit (DefaultMaxLineBytes unless WithMaxLineBytes) gets bad_request
// and its rest is read and dropped, never held in memory.
//
// # Concurrency
//
// Serve reads commands in order and runs them through a command.Pipeline:
// each goes to its session once the one before it has reached its own (not
// once it is answered), on a goroutine of its own, and the responses are
// written in the order of the lines; at most inFlight run at once. Each
// session the connection creates has a subscription whose events a
// goroutine forwards to the output. Lines are written whole and never
// interleaved. A slow reader of the output gets events_lost rather than
// slowing the sessions.
//
// # Testing
//
// Serve works on any io.Reader and io.Writer, so tests drive it with pipes;
// cmd/tack's tests run `tack rpc` as a subprocess.
package rpc
