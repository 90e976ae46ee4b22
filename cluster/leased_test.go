package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	actorcluster "github.com/asynkron/protoactor-go/cluster"
)

// fakeRegistry answers renewals with err, and counts them.
type fakeRegistry struct {
	err    error
	renews int
}

func (r *fakeRegistry) register(context.Context, *actorcluster.Member, time.Duration) error {
	return nil
}
func (r *fakeRegistry) renew(context.Context, time.Duration) error {
	r.renews++
	return r.err
}
func (r *fakeRegistry) list(context.Context) ([]*actorcluster.Member, error) { return nil, nil }
func (r *fakeRegistry) deregister(context.Context) error                     { return nil }
func (r *fakeRegistry) close()                                               {}

// TestLeasedRenew: a member learns it was dropped when the registry
// refuses to renew its lapsed registration, or when it could not renew
// for the TTL, whatever the registry answers then; a renewal that fails
// within the TTL is only an error, tried again at the next refresh.
func TestLeasedRenew(t *testing.T) {
	const ttl = time.Minute
	unreachable := errors.New("registry unreachable")
	for _, tt := range []struct {
		name    string
		err     error
		since   time.Duration // since the last renewal
		lapsed  bool
		err2    error
		renewed int
	}{
		{"renewed", nil, time.Second, false, nil, 1},
		{"refused: lapsed", errLapsed, time.Second, true, nil, 1},
		{"unreachable within the TTL", unreachable, time.Second, false, unreachable, 1},
		{"not renewed for the TTL", nil, ttl + time.Second, true, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := &fakeRegistry{err: tt.err}
			p := &leased{reg: reg, ttl: ttl, refresh: time.Second}
			err := p.renew(t.Context(), time.Now().Add(-tt.since))
			if errors.Is(err, errLapsed) != tt.lapsed {
				t.Fatalf("renew: %v, lapsed %v", err, tt.lapsed)
			}
			if tt.err2 != nil && !errors.Is(err, tt.err2) {
				t.Fatalf("renew: %v, want %v", err, tt.err2)
			}
			if reg.renews != tt.renewed {
				t.Fatalf("the registry was asked %d times, want %d", reg.renews, tt.renewed)
			}
		})
	}
}
