package tools

import "context"

// sessionKey is the context key of the session a call belongs to.
type sessionKey struct{}

// WithSession returns ctx marked as belonging to session id; the runtime
// marks every call's context so that tools find the session's workspace.
func WithSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// SessionOf returns the session id WithSession put in ctx, or "".
func SessionOf(ctx context.Context) string {
	id, _ := ctx.Value(sessionKey{}).(string)
	return id
}

// Workspace finds the directory a call works in: the file tools are
// confined to it and shell starts in it. Package tools/workspace has the
// implementations the runtime uses.
type Workspace interface {
	// Dir returns the directory of the call whose context is ctx,
	// making it if it does not exist yet.
	Dir(ctx context.Context) (string, error)
	// Owner returns the user and group that files made in the
	// workspace are given, or -1, -1 to leave them as made.
	Owner() (uid, gid int)
}
