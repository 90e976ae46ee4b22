// Package command runs the commands of Tack's protocol (docs/protocol.md)
// for every server that offers them: it decodes a command's JSON object
// into its events/v1 message, checks it (unknown fields, required fields,
// allowed values) and executes it against the runtime or a session.
// server/rpc (JSON lines) and server/http (REST and WebSocket) all call
// it, so a command means the same over every transport. Parse and
// AppendResponse read a command object ({"cmd":..., "id":...,
// "session":..., fields}) and write its response, the shapes JSON lines
// and WebSocket frames share.
//
// # Usage
//
//	data, err := command.Run(ctx, command.Env{Runtime: rt, User: "alice"},
//		"prompt", "s-1", []byte(`{"text":"hello"}`))
//
// data is the response's data (nil when the command answers nothing);
// err is a *tack.Error whose Code is the protocol's error code.
//
// # Concurrency
//
// Run is safe for concurrent use; each call decodes into its own message.
//
// # Testing
//
// The servers' tests drive every command through their transports; this
// package's own tests are the fuzz targets in server/rpc.
package command
