package join

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Forget makes sure, for a member of an etcd cluster that was dropped
// and has shut its provider down, that its registration under memberID
// (its actor system's id) is gone. protoactor's etcd provider re-registers
// a member whose lease lapsed, and may do so while it shuts down; its etcd
// client, which it never closes, then keeps that registration alive for
// ever: a member of no actor system in every view. Forget looks for the
// registration three times, a second apart (the provider's retry
// interval), and revokes its lease, which removes it. It does nothing for
// the automanaged provider.
func (c Config) Forget(memberID string) error {
	if c.Provider != Etcd {
		return nil
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Seeds, DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer cli.Close()
	key := etcdBaseKey + "/" + c.Name + "/" + c.Name + "@" + memberID
	for range 3 {
		time.Sleep(time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := cli.Get(ctx, key)
		if err == nil && len(res.Kvs) > 0 {
			if lease := res.Kvs[0].Lease; lease != 0 {
				_, err = cli.Revoke(ctx, clientv3.LeaseID(lease))
			} else {
				_, err = cli.Delete(ctx, key)
			}
		}
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}
