package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	actorcluster "github.com/asynkron/protoactor-go/cluster"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdRegistry keeps each member's registration under
// <etcdBaseKey>/<cluster>/<member id>, with an etcd lease of the member's
// own: etcd revokes a lease that was not kept alive within its TTL (a
// keep-alive that reaches etcd after that waits for the revocation and
// is answered "lease not found"), which removes the registration for
// every member and client at once.
type etcdRegistry struct {
	cli    *clientv3.Client
	prefix string
	lease  clientv3.LeaseID
}

// newEtcdRegistry connects to the etcd at endpoints for cluster name.
func newEtcdRegistry(endpoints []string, name string) (*etcdRegistry, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second,
		// What goes wrong reaches the provider as errors.
		Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", strings.Join(endpoints, ","), err)
	}
	return &etcdRegistry{cli: cli, prefix: etcdBaseKey + "/" + name + "/"}, nil
}

func (r *etcdRegistry) register(ctx context.Context, m *actorcluster.Member, ttl time.Duration) error {
	lease, err := r.cli.Grant(ctx, int64((ttl+time.Second-1)/time.Second))
	if err != nil {
		return fmt.Errorf("registering in etcd: %w", err)
	}
	value, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := r.cli.Put(ctx, r.prefix+m.Id, string(value), clientv3.WithLease(lease.ID)); err != nil {
		return fmt.Errorf("registering in etcd: %w", err)
	}
	r.lease = lease.ID
	return nil
}

func (r *etcdRegistry) renew(ctx context.Context, _ time.Duration) error {
	res, err := r.cli.KeepAliveOnce(ctx, r.lease)
	if errors.Is(err, rpctypes.ErrLeaseNotFound) || err == nil && res.TTL <= 0 {
		return errLapsed
	}
	return err
}

func (r *etcdRegistry) list(ctx context.Context) ([]*actorcluster.Member, error) {
	res, err := r.cli.Get(ctx, r.prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	members := make([]*actorcluster.Member, 0, len(res.Kvs))
	for _, kv := range res.Kvs {
		var m actorcluster.Member
		if err := json.Unmarshal(kv.Value, &m); err != nil {
			return nil, fmt.Errorf("etcd key %s: %w", kv.Key, err)
		}
		members = append(members, &m)
	}
	return members, nil
}

func (r *etcdRegistry) deregister(ctx context.Context) error {
	_, err := r.cli.Revoke(ctx, r.lease)
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return nil
	}
	return err
}

func (r *etcdRegistry) close() { _ = r.cli.Close() }
