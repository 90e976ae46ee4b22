// Package remote serves a runtime's sessions to other actor systems over
// protoactor-go's remote (gRPC): what `tack node` runs.
//
// A Node starts a protoactor remote endpoint in the runtime's actor
// system and spawns the gateway actor "tack", which answers CreateSession,
// ListSessions (events/v1) and Lookup (remotev1). Each session a caller
// creates or looks up gets a PID of its own, "tack/<session id>" at the
// node's address: the events/v1 commands sent there (Prompt, Steer, Abort,
// ...) reach the session in the order they were sent and are answered
// with an events/v1 Reply, and remotev1.Subscribe there makes any actor a
// subscriber of the session's events. That PID is not the session actor's
// own: it stays good while the session is passivated and restored, which
// happens behind it. The kind "tack.session" lets a caller spawn by kind
// (remote.SpawnNamed with the session id as name). docs/remote.md is the
// reference.
//
// # Cluster
//
// StartMember makes the node a member of a protoactor cluster (package
// join configures it): each session is a grain of kind SessionKind whose
// identity is its id, placed by disthash; the grain hands commands to its
// member's runtime, which restores the session from the shared store and
// takes its lease, waiting out another member's (cluster.go tells the
// rules). The gateway creates and looks up sessions through the cluster,
// and "tack/<id>" on a member forwards to the grain wherever it is.
//
// # Concurrency
//
// A session's PID is a protoactor Process whose SendUserMessage runs on
// the remote endpoint's goroutine: it does no I/O, and hands each message
// to the runtime by session id (package internal/hosting, what a runtime
// lends this package beyond its public API), which queues it while the
// session is restored. Commands that need the runtime rather than the
// session actor (CreateSession, ListSessions, Lookup, SwitchModel, Fork,
// CloseSession) run on goroutines of their own and answer the sender when
// done, so they are not ordered with the commands sent after them.
//
// # Testing
//
// The tests start real `tack node` processes and drive them from an actor
// system of their own over loopback (cmd/tack and examples/remote), over
// mutual TLS too, with certificates of a CA made in the test; the
// cluster's tests, with three members on PostgreSQL, are package join's.
// BenchmarkRemoteAbortFanout times agent_abort reaching remote
// subscribers of 1,000 sessions aborted at once (docs/benchmarks.md).
//
// # TLS
//
// WithRemoteOptions passes protoactor remote options, such as those of
// package remotetls, which `tack node --tls-cert --tls-key
// --tls-client-ca` uses.
package remote
