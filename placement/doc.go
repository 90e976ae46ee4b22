// Package placement keeps where a process's sessions are: it spawns their
// actors, finds them by id, and with a store keeps the life of a stored
// session — recorded before it starts, restored on its first use (once,
// however many ask at the same time), its lease renewed while it is
// loaded and given up when it closes, passivated when it has been quiet,
// and deleted for good with its sub-agents.
//
// A session knows its Registry only as an actors.Place: the registry asks
// the session actor to settle or whether it is in use with the messages
// package actors exports for it (Settle, InUse); the session passivates
// itself through the registry (Leave, then Stay or Left) and asks it to
// start and stop its sub-agents.
//
// Files: registry.go (the map of loaded sessions, Create, Close, Release,
// leases), restore.go (Get and Deliver, which restore a stored session on
// its first use), passivate.go, delete.go.
package placement
