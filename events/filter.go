package events

import (
	"errors"
	"fmt"
	"strings"

	eventsv1 "github.com/tack-run/tack/events/v1"
)

// ErrUnknownType is wrapped by the error NewFilter returns for a name that
// is not an event type or a prefix that matches none, so a caller can map
// it to bad_request with errors.Is.
var ErrUnknownType = errors.New("unknown event type")

// Filter selects events by type. The zero Filter matches every event, as
// does NewFilter(nil). events_lost notices always match, whatever the
// filter: a subscriber must learn of a gap even when it asked for other
// types. A Filter is a small value, safe to copy and to use from several
// goroutines.
type Filter struct {
	restricted bool
	set        [(numTypes + 63) / 64]uint64
}

// NewFilter returns a Filter matching the event types named by patterns: an
// exact wire name ("message_delta") or a prefix followed by a trailing "*"
// ("tool_*"; "*" alone matches all). An empty list matches everything. An
// unknown exact name, or a prefix that matches no known type, is an error
// wrapping ErrUnknownType.
func NewFilter(patterns []string) (Filter, error) {
	var f Filter
	if len(patterns) == 0 {
		return f, nil
	}
	f.restricted = true
	for _, p := range patterns {
		prefix, isPrefix := strings.CutSuffix(p, "*")
		matched := false
		for i, name := range typeNames {
			if name == p || isPrefix && strings.HasPrefix(name, prefix) {
				f.set[i/64] |= 1 << (i % 64)
				matched = true
			}
		}
		if !matched {
			if isPrefix {
				return Filter{}, fmt.Errorf("%w: pattern %q matches no event type", ErrUnknownType, p)
			}
			return Filter{}, fmt.Errorf("%w: %q", ErrUnknownType, p)
		}
	}
	return f, nil
}

// MustFilter is NewFilter for patterns fixed in the program; it panics on
// an error.
func MustFilter(patterns ...string) Filter {
	f, err := NewFilter(patterns)
	if err != nil {
		panic(err)
	}
	return f
}

// Match reports whether ev passes the filter. It does not allocate.
func (f Filter) Match(ev *eventsv1.Event) bool {
	if !f.restricted {
		return true
	}
	i := typeIndex(ev)
	if i < 0 {
		return false
	}
	return i == idxEventsLost || f.set[i/64]&(1<<(i%64)) != 0
}
