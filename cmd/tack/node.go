package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/server/remote"
)

// node serves sessions to other actor systems over protoactor remote
// (docs/remote.md) until SIGINT or SIGTERM; stored sessions stay stored.
func node(args []string) error {
	var c common
	var listen string
	var passivate time.Duration
	fs := flag.NewFlagSet("tack node", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: tack node --listen HOST:PORT [flags]\n\n"+
			"Serves sessions to other actor systems over protoactor remote: the gateway actor \"tack\"\n"+
			"creates and looks up sessions, tack/<session> takes a session's events/v1 commands\n"+
			"(docs/remote.md).\n\nflags:\n")
		fs.PrintDefaults()
	}
	c.register(fs, "sqlite:")
	fs.StringVar(&listen, "listen", "", "HOST:PORT to serve protoactor remote on (port 0 picks a free one); only a loopback host: the endpoint has no credentials")
	fs.DurationVar(&passivate, "passivate-after", tack.DefaultPassivateAfter, "stop a stored session quiet this long and restore it on its next command (0: never)")
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
	if err := loopbackListen(listen); err != nil {
		return err
	}
	log := zap.NewNop()
	if c.verbose {
		var err error
		if log, err = zap.NewDevelopment(); err != nil {
			return err
		}
	}
	rt, closeRuntime, err := c.runtime(tack.WithPassivateAfter(passivate))
	if err != nil {
		return err
	}
	defer closeRuntime()
	n, err := remote.Start(rt, listen, remote.WithLogger(log))
	if err != nil {
		return fmt.Errorf("--listen %s: %w", listen, err)
	}
	defer n.Close()
	fmt.Fprintf(os.Stderr, "tack node: listening on %s (gateway %q)\n", n.Address(), "tack")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

// loopbackListen refuses a --listen host other than loopback: the
// endpoint takes no credentials, so anyone who reaches it drives every
// session.
func loopbackListen(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--listen %s is not a loopback address: tack node has no credentials of its own, so anyone who reaches it "+
		"could drive every session; listen on 127.0.0.1 (and reach it through a tunnel), see docs/remote.md", addr)
}
