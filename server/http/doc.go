// Package http serves Tack's protocol over HTTP (docs/http.md, `tack
// serve`): every command as a REST route under /v1, each session's events
// as a Server-Sent Events stream, a WebSocket per session carrying its
// events and commands (the frames tack rpc reads and writes), AG-UI runs
// (package agui) at /v1/sessions/{id}/agui, bearer-token and JWT
// authentication, one owner per session, and Prometheus metrics at
// /metrics (WithMetrics).
//
// # Usage
//
//	srv, err := http.New(rt, http.WithAuth(a), http.WithLogger(log))
//	err = srv.Serve(ctx, ln) // until ctx ends, then a graceful shutdown
//
// A Server is an http.Handler too, for callers that run their own
// http.Server (they call Drain before its Shutdown, so that event
// streams and WebSockets end, and WaitSockets after it: Shutdown does not
// wait for hijacked connections).
//
// # Routes
//
// routes lists every route on one standard library ServeMux with method
// patterns; every route runs behind the same middlewares: request
// logging (the path and the user, never the query, which may carry a
// token), panic recovery (500 internal, the server keeps serving), guard
// (403 forbidden for a Host that is not allowed — only loopback names
// without WithAuth — and for a state-changing request or WebSocket
// upgrade a browser marks as cross-origin, by net/http's
// CrossOriginProtection with the WithCORSOrigins origins trusted), CORS
// (off unless origins are trusted), authentication, and a cap on request
// bodies. An unknown path answers 404 and a wrong method 405, with code
// unknown_command; every error body is JSON.
//
// # Ownership
//
// A session belongs to the user who created it. A route about a session
// first reads its owner from the session's record (never restoring the
// session) and answers another user exactly as it answers for a session
// that does not exist: 404 invalid_session, same body.
//
// # Audit
//
// audit logs, on the server's logger, who created, forked, deleted,
// approved or rejected what, and every command refused as forbidden.
//
// # Concurrency
//
// Each request runs on its own goroutine. An event stream and a
// WebSocket read a bounded subscription (follow, shared by both): one
// that falls too far behind is ended after an events_lost message, and
// never slows the session. A WebSocket has four goroutines: the handler
// writes events, one reads frames, one runs their commands in order and
// writes the responses, one pings.
//
// # Testing
//
// The tests drive a real server on a loopback port with scenario tables
// (request, status, body, events that must have fired), read real event
// streams, and restart the server on the same SQLite file.
package http
