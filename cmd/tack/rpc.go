package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"syscall"

	"github.com/tack-run/tack/server/rpc"
)

// rpcCmd serves the JSON-lines protocol on stdin/stdout until stdin ends.
func rpcCmd(args []string) error {
	var c common
	fs := flag.NewFlagSet("tack rpc", flag.ContinueOnError)
	c.register(fs, "memory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	rt, closeRuntime, err := c.runtime()
	if err != nil {
		return err
	}
	defer closeRuntime()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return rpc.Serve(ctx, rt, os.Stdin, os.Stdout)
}
