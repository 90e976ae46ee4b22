package remotev1

import "github.com/asynkron/protoactor-go/actor"

// GatewayName is the name of a node's gateway actor, which answers
// CreateSession, ListSessions and Lookup.
const GatewayName = "tack"

// GatewayPID is the gateway of the node listening at address.
func GatewayPID(address string) *actor.PID { return actor.NewPID(address, GatewayName) }

// SessionPID is the PID that session id's commands go to on the node at
// address. It stays good while the session is passivated and restored; a
// node that restarted knows it again once the session has been created or
// looked up there (Lookup answers it).
func SessionPID(address, id string) *actor.PID {
	return actor.NewPID(address, GatewayName+"/"+id)
}

// SessionKind is the kind of a session: the cluster kind whose identity
// is the session id (tack node --cluster), and the remote kind a plain
// tack node spawns by.
const SessionKind = "tack.session"
