package store

import (
	"fmt"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// Batch is one atomic write to a session: Apply stores all of it or none.
// Zero fields leave the stored value unchanged, so a batch names only what
// changed. Applying the same batch twice stores the same result, which
// makes a retry after an ambiguous failure safe.
type Batch struct {
	// Owner, when set, fences the write: Apply fails with ErrOwned unless
	// Owner holds the session's lease (even an expired one nobody else has
	// taken). The check and the write are one transaction, so a node that
	// lost its lease cannot write after the new owner acquired it.
	Owner string
	// From is the history index of Messages[0].
	From int
	// Messages are committed messages with consecutive indexes From,
	// From+1, ... An index that is already stored is skipped, not compared,
	// so a retried batch cannot duplicate; From beyond the stored history
	// fails with ErrGap.
	Messages []*eventsv1.Message
	// Rewrite replaces the stored history from From on with Messages:
	// what compaction writes (the summary and the messages it kept, moved
	// up by one) and the first write after a failed one.
	Rewrite bool
	// HistoryStart, when non-zero or with Rewrite (SetsStart), records
	// where the working history starts (Session.HistoryStart); it is at
	// most the history's length after the batch. Compaction sets it with
	// Rewrite in one batch, so a crash leaves either the old history or
	// the new one; a rollback that brings archived messages back into the
	// working history moves it back, to 0 too.
	HistoryStart int
	// Config, when non-nil, replaces the session's configuration.
	Config *Config
	// State, when set, records the session's FSM state.
	State string
	// Usage, when non-nil, replaces the usage totals.
	Usage *eventsv1.Usage
	// EventSeq, when non-zero, records the last event sequence number.
	EventSeq uint64
	// Volatile, when non-nil, replaces the volatile state as a whole.
	Volatile *Volatile
	// Title, when set, records the session's title.
	Title string
}

// Validate reports a malformed batch as ErrInvalid. Implementations call it
// before writing; a message that cannot be encoded is found later, while
// encoding, and fails the batch the same way.
func (b *Batch) Validate() error {
	switch {
	case b == nil:
		return fmt.Errorf("%w: nil batch", ErrInvalid)
	case b.From < 0:
		return fmt.Errorf("%w: negative message index %d", ErrInvalid, b.From)
	case b.HistoryStart < 0:
		return fmt.Errorf("%w: negative history start %d", ErrInvalid, b.HistoryStart)
	}
	if b.Config != nil {
		if err := b.Config.Validate(); err != nil {
			return err
		}
	}
	if err := CheckText("state", b.State); err != nil {
		return err
	}
	if err := CheckText("title", b.Title); err != nil {
		return err
	}
	if err := CheckText("owner", b.Owner); err != nil {
		return err
	}
	for i, m := range b.Messages {
		if m == nil {
			return fmt.Errorf("%w: message %d is nil", ErrInvalid, b.From+i)
		}
	}
	if v := b.Volatile; v != nil {
		for i, it := range v.SteeringQueue {
			if it == nil {
				return fmt.Errorf("%w: steering item %d is nil", ErrInvalid, i)
			}
		}
		for i, a := range v.Approvals {
			if a.Pending == nil {
				return fmt.Errorf("%w: approval %d is nil", ErrInvalid, i)
			}
		}
		if v.Question != nil && v.Question.Pending == nil {
			return fmt.Errorf("%w: question is nil", ErrInvalid)
		}
	}
	return nil
}

// SetsStart reports whether the batch records HistoryStart: a rewrite
// always says where the working history starts.
func (b *Batch) SetsStart() bool { return b.HistoryStart != 0 || b.Rewrite }

// Start checks the history start the batch records against count, the
// history's length after it (Count): ErrInvalid when it lies beyond.
func (b *Batch) Start(count int) error {
	if b.HistoryStart > count {
		return fmt.Errorf("%w: history start %d beyond the %d messages", ErrInvalid, b.HistoryStart, count)
	}
	return nil
}

// Count is the history length after the batch is applied to a history of
// stored messages. Call it only after Validate and the gap check.
func (b *Batch) Count(stored int) int {
	end := b.From + len(b.Messages)
	if b.Rewrite || end > stored {
		return end
	}
	return stored
}
