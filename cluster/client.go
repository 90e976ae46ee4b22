package cluster

import (
	"fmt"
	"net"

	"github.com/asynkron/protoactor-go/actor"
	actorcluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/remote"
)

// Client joins sys to the cluster cfg names as a client: it reaches the
// sessions of the cluster (Request, Follow) and hosts none. sys gets a
// protoactor remote of its own on host (a free port): members answer a
// client by dialling it back. With the automanaged provider the client
// has asked every seed once when Client returns, and a member that stops
// answering its polls comes back into its view when it answers again
// (seeds.go). Close leaves.
func Client(sys *actor.ActorSystem, host string, cfg Config) (*Cluster, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cc, err := cfg.configure(cfg.clientProvider, remote.Configure(host, port))
	if err != nil {
		return nil, err
	}
	c := Watch(actorcluster.New(sys, cc))
	if err := Started(c.StartClient); err != nil {
		return nil, err
	}
	return c, nil
}

// Started runs start — a protoactor cluster's StartMember or StartClient,
// which panic when they cannot listen or reach the provider — and turns
// its panic into an error.
func Started(start func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("joining the cluster: %v", p)
		}
	}()
	start()
	return nil
}

// Close leaves the cluster a Client joined and stops its remote; the
// actor system stays, for its owner to shut down. The remote stops as a
// node's does (Shutdown(false)): protoactor's graceful stop clears its
// endpoint manager's connections while an endpoint writer whose stream
// just broke may still read them (a data race -race reported in CI), and
// the actor system's shutdown stops the endpoints all the same.
func Close(c *Cluster) {
	_ = c.Config.ClusterProvider.Shutdown(false)
	c.IdentityLookup.Shutdown()
	c.Remote.Shutdown(false)
}
