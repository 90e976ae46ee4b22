package front

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/cluster"
	"github.com/tack-run/tack/events"
	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/server/remote/remotev1"
)

// Sessions are the sessions of a cluster, reached as its client: a
// tack.Elsewhere.
type Sessions struct{ c *cluster.Cluster }

var _ tack.Elsewhere = (*Sessions)(nil)

// New returns the sessions of the cluster c joins as a client
// (cluster.Client).
func New(c *cluster.Cluster) *Sessions { return &Sessions{c: c} }

// Create creates the session cfg describes on the member its id belongs
// to, for cfg.User.
func (s *Sessions) Create(ctx context.Context, cfg tack.SessionConfig) (string, error) {
	if cfg.ID == "" {
		cfg.ID = cluster.NewSessionID()
	}
	r, err := s.Request(ctx, cfg.ID, &remotev1.Create{Create: cfg.Create(), User: cfg.User})
	if err != nil {
		return "", err
	}
	if r.Error != nil {
		return "", &tack.Error{Code: r.Error.Code, Message: r.Error.Message}
	}
	return r.GetCreated().GetSession(), nil
}

// Request sends cmd to session id's grain, for the user ctx names
// (tack.ForUser), and returns its Reply; no answer is not_alive.
func (s *Sessions) Request(ctx context.Context, id string, cmd proto.Message) (*eventsv1.Reply, error) {
	res, err := cluster.RequestFor(ctx, s.c, id, tack.UserOf(ctx), cmd)
	if err != nil {
		return nil, &tack.Error{Code: events.CodeNotAlive, Message: err.Error()}
	}
	r, ok := res.(*eventsv1.Reply)
	if !ok {
		return nil, &tack.Error{Code: events.CodeInternal, Message: fmt.Sprintf("session %s answered %T", id, res)}
	}
	return r, nil
}

// Follow follows session id with cluster.Follow; a first subscription that
// fails is not_alive.
func (s *Sessions) Follow(id, user string, since uint64, types []string, handle func(*eventsv1.Event)) (stop func(), err error) {
	pid, err := cluster.FollowFor(s.c, id, user, since, types, handle)
	if err != nil {
		return nil, &tack.Error{Code: events.CodeNotAlive, Message: err.Error()}
	}
	return func() { _ = s.c.ActorSystem.Root.StopFuture(pid).Wait() }, nil
}
