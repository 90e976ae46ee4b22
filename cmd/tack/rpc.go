package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tack-run/tack/server/rpc"
)

// rpcCmd serves the JSON-lines protocol on stdin/stdout until stdin ends.
func rpcCmd(args []string) error {
	var c common
	fs := flag.NewFlagSet("tack rpc", flag.ContinueOnError)
	c.register(fs, "memory", false)
	maxLine := fs.Int("max-line-bytes", rpc.DefaultMaxLineBytes, "longest command line accepted, in bytes; a longer one gets a bad_request response and is skipped")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *maxLine <= 0 {
		return fmt.Errorf("--max-line-bytes must be positive, not %d", *maxLine)
	}
	rt, closeRuntime, err := c.runtime()
	if err != nil {
		return err
	}
	defer closeRuntime()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return rpc.Serve(ctx, rt, os.Stdin, os.Stdout, rpc.WithMaxLineBytes(*maxLine))
}
