package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/cluster"
	"github.com/tack-run/tack/server/remote"
	"github.com/tack-run/tack/server/remote/remotetls"
)

// node serves sessions to other actor systems over protoactor remote
// (docs/remote.md) until SIGINT or SIGTERM; stored sessions stay stored.
func node(args []string) error {
	var c common
	var listen, tlsCert, tlsKey, tlsClientCA string
	var passivate, retention time.Duration
	var cf clusterFlags
	fs := flag.NewFlagSet("tack node", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: tack node --listen HOST:PORT [flags]\n"+
			"       tack node --listen HOST:PORT --cluster NAME --store postgres://... --cluster-seeds HOST:PORT,... [flags]\n\n"+
			"Serves sessions to other actor systems over protoactor remote: the gateway actor \"tack\"\n"+
			"creates and looks up sessions, tack/<session> takes a session's events/v1 commands.\n"+
			"With --cluster the node is a member of a protoactor cluster: every session is a virtual\n"+
			"actor (kind tack.session, identity the session id) that any member or cluster client\n"+
			"reaches by id; it runs on one member at a time, restored from PostgreSQL, and comes back\n"+
			"on another member when its member dies (docs/remote.md). A member the cluster drops\n"+
			"(it stalled past its registration) leaves and rejoins as a new member on the same address.\n\n"+
			"Only a loopback --listen host is accepted unless callers must hold a certificate: with\n"+
			"--tls-cert, --tls-key and --tls-client-ca the endpoint speaks mutual TLS in both\n"+
			"directions (the node dials callers' own endpoints to answer), and callers run their\n"+
			"endpoint with a certificate that CA signed and trust the CA that signed the node's.\n\nflags:\n")
		fs.PrintDefaults()
	}
	c.register(fs, "sqlite:", true)
	fs.StringVar(&listen, "listen", "", "HOST:PORT to serve protoactor remote on (port 0 picks a free one); a host other than loopback only with mutual TLS")
	fs.StringVar(&tlsCert, "tls-cert", "", "PEM `FILE` of the node's certificate: serve and dial protoactor remote over TLS (with --tls-key)")
	fs.StringVar(&tlsKey, "tls-key", "", "PEM `FILE` of the --tls-cert certificate's private key")
	fs.StringVar(&tlsClientCA, "tls-client-ca", "", "PEM `FILE` of the CA that signs callers' certificates: mutual TLS, callers without one are refused (and the node trusts callers' endpoints by this CA when it dials them)")
	fs.DurationVar(&passivate, "passivate-after", tack.DefaultPassivateAfter, "stop a stored session quiet this long and restore it on its next command (0: never)")
	retainFlag(fs, &retention)
	cf.register(fs, "join the protoactor cluster NAME (needs --store postgres://...)", true)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("tack node takes no arguments, got %q (flags come before them?)", fs.Args())
	}
	if listen == "" {
		return fmt.Errorf("tack node needs --listen HOST:PORT, e.g. --listen 127.0.0.1:8090")
	}
	if passivate < 0 {
		return fmt.Errorf("--passivate-after %s: must not be negative", passivate)
	}
	if err := checkRetain(retention, c.store); err != nil {
		return err
	}
	var remoteOpts []remote.Option
	switch {
	case tlsCert == "" && tlsKey == "" && tlsClientCA == "":
	case tlsCert == "" || tlsKey == "":
		return fmt.Errorf("--tls-cert and --tls-key go together (and --tls-client-ca needs both)")
	default:
		tlsOpts, err := remotetls.Options(tlsCert, tlsKey, tlsClientCA)
		if err != nil {
			return err
		}
		remoteOpts = append(remoteOpts, remote.WithRemoteOptions(tlsOpts...))
	}
	if tlsClientCA == "" {
		if err := loopbackListen(listen); err != nil {
			return err
		}
	}
	log := zap.NewNop()
	if c.verbose {
		var err error
		if log, err = zap.NewDevelopment(); err != nil {
			return err
		}
	}
	opts := []tack.Option{tack.WithPassivateAfter(passivate)}
	cl, err := cf.config(c.store, "the members share their sessions and leases through PostgreSQL")
	if err != nil {
		return err
	}
	if cl.Name != "" {
		// The member a session moves to waits out the lease of the one it
		// moved from: a dead member's lasts up to --lease-ttl.
		opts = append(opts, tack.WithLeaseWait(2*c.leaseTTL))
	}
	security := "plaintext"
	switch {
	case tlsClientCA != "":
		security = "mutual TLS"
	case tlsCert != "":
		security = "TLS"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for rejoining := false; ; rejoining = true {
		addr, dropped, err := serveNode(ctx, &c, listen, cl, opts, append(remoteOpts, remote.WithLogger(log)), security, retention)
		if err != nil && rejoining && ctx.Err() == nil {
			// The registry (etcd, PostgreSQL) may be what stalled: keep
			// trying until it answers again.
			fmt.Fprintf(os.Stderr, "tack node: rejoining cluster %s: %v; trying again in %s\n", cl.Name, err, rejoinPause)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(rejoinPause):
			}
			continue
		}
		if err != nil || !dropped {
			return err
		}
		// protoactor never takes a member back under the identity it had:
		// join again as a new actor system, on the same address.
		fmt.Fprintf(os.Stderr, "tack node: dropped from cluster %s (it stalled past its registration or a health poll); rejoining as a new member\n", cl.Name)
		listen = addr
	}
}

// rejoinPause is how long a dropped member waits before it tries again to
// join a cluster whose provider did not answer.
const rejoinPause = time.Second

// serveNode serves a runtime of c's at listen until ctx is done, or, for
// a cluster member, until the cluster drops it (dropped): then the node
// and the runtime are closed, the sessions here released for the other
// members, and addr is where it listened.
func serveNode(ctx context.Context, c *common, listen string, cl cluster.Config, opts []tack.Option, nodeOpts []remote.Option, security string, retention time.Duration) (addr string, dropped bool, err error) {
	rt, closeRuntime, err := c.runtime(opts...)
	if err != nil {
		return "", false, err
	}
	defer closeRuntime()
	defer retain(ctx, rt, retention)()
	var n *remote.Node
	if cl.Name == "" {
		n, err = remote.Start(rt, listen, nodeOpts...)
	} else {
		n, err = remote.StartMember(rt, listen, cl, append(nodeOpts, remote.WithMembers(func(members []string) {
			fmt.Fprintf(os.Stderr, "tack node: cluster %s has %d members: %s\n", cl.Name, len(members), strings.Join(members, " "))
		}))...)
	}
	if err != nil {
		return "", false, fmt.Errorf("--listen %s: %w", listen, err)
	}
	defer n.Close()
	member := ""
	if cl.Name != "" {
		member = ", member " + n.ID()
	}
	fmt.Fprintf(os.Stderr, "tack node: listening on %s (gateway %q, %s%s)\n", n.Address(), "tack", security, member)
	select {
	case <-ctx.Done():
		return n.Address(), false, nil
	case <-n.Dropped():
		return n.Address(), true, nil
	}
}

// loopbackListen refuses a --listen host other than loopback when the
// endpoint asks callers for no certificate: anyone who reaches it would
// drive every session.
func loopbackListen(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--listen %s is not a loopback address: without --tls-client-ca the node asks callers for no certificate, "+
		"so anyone who reaches it could drive every session; give --tls-cert, --tls-key and --tls-client-ca (mutual TLS), "+
		"or listen on 127.0.0.1 and reach it through a tunnel, see docs/remote.md", addr)
}
