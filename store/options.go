package store

import "time"

// Option configures a Store implementation.
type Option func(*Options)

// Options are the settings every implementation accepts. Implementations
// build them with NewOptions.
type Options struct {
	// Clock gives the time for created/updated stamps and lease expiry.
	Clock func() time.Time
}

// NewOptions applies opts over the defaults (Clock: time.Now).
func NewOptions(opts ...Option) Options {
	o := Options{Clock: time.Now}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Now is the clock's time as stored: UTC, truncated to the microsecond
// (PostgreSQL's precision), without a monotonic reading.
func (o Options) Now() time.Time { return o.Clock().UTC().Truncate(time.Microsecond) }

// WithClock makes the store read time from now instead of time.Now; tests
// use it to expire leases without sleeping. A nil now keeps time.Now.
func WithClock(now func() time.Time) Option {
	return func(o *Options) {
		if now != nil {
			o.Clock = now
		}
	}
}
