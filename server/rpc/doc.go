// Package rpc serves Tack's JSON-lines protocol (docs/protocol.md): one
// command per input line, one JSON object per output line — the responses
// and every event of every session the connection created.
//
// # Usage
//
//	err := rpc.Serve(ctx, rt, os.Stdin, os.Stdout)
//
// # Concurrency
//
// Serve reads commands one at a time, in order; each session the connection
// creates has a subscription whose events a goroutine forwards to the
// output. Lines are written whole and never interleaved. A slow reader of
// the output gets events_lost rather than slowing the sessions.
//
// # Testing
//
// Serve works on any io.Reader and io.Writer, so tests drive it with pipes;
// cmd/tack's tests run `tack rpc` as a subprocess.
package rpc
