package store

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors every implementation returns, wrapped with details; test them with
// errors.Is.
var (
	// ErrNotFound: no session has the id.
	ErrNotFound = errors.New("store: session not found")
	// ErrExists: Create was given an id that is already stored.
	ErrExists = errors.New("store: session already exists")
	// ErrOwned: another owner holds the session's lease. The error is an
	// *OwnedError naming the holder.
	ErrOwned = errors.New("store: session owned by another node")
	// ErrLocked: another process has the SQLite database open for writing.
	ErrLocked = errors.New("store: database locked by another process")
	// ErrGap: a batch's first message index is past the end of the stored
	// history, so writing it would leave a hole.
	ErrGap = errors.New("store: message index leaves a gap in the history")
	// ErrInvalid: an argument is malformed (a nil or unencodable message, a
	// negative index, a bad cursor, an empty id).
	ErrInvalid = errors.New("store: invalid argument")
)

// OwnedError is the ErrOwned failure: Owner holds the lease of Session
// until Expires. Owner is empty when nobody holds it (Renew or Release of a
// lease that is gone).
type OwnedError struct {
	Session string
	Owner   string
	Expires time.Time
}

// Error names the session and its current holder.
func (e *OwnedError) Error() string {
	if e.Owner == "" {
		return fmt.Sprintf("store: session %s is not held by this owner (no lease)", e.Session)
	}
	return fmt.Sprintf("store: session %s is owned by %q until %s",
		e.Session, e.Owner, e.Expires.UTC().Format(time.RFC3339Nano))
}

// Is makes errors.Is(err, ErrOwned) true.
func (e *OwnedError) Is(target error) bool { return target == ErrOwned }

// CheckID reports an empty or non-text session id as ErrInvalid.
func CheckID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty session id", ErrInvalid)
	}
	return CheckText("session id", id)
}

// CheckOwner reports an empty or non-text lease owner as ErrInvalid.
func CheckOwner(owner string) error {
	if owner == "" {
		return fmt.Errorf("%w: empty lease owner", ErrInvalid)
	}
	return CheckText("lease owner", owner)
}

// CheckLease reports an empty owner or a non-positive ttl as ErrInvalid.
func CheckLease(owner string, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("%w: lease ttl %v is not positive", ErrInvalid, ttl)
	}
	return CheckOwner(owner)
}

// Within reports whether session id is session parent or one of its
// sub-agents (an id that starts with parent + "/"), at any depth: the
// sessions Delete removes together.
func Within(id, parent string) bool {
	return id == parent || strings.HasPrefix(id, parent+"/")
}
