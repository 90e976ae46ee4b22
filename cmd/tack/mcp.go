package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tack-run/tack/server/mcpserver"
)

// mcpCmd serves the configured agents as MCP tools on stdin/stdout
// until the client closes stdin.
func mcpCmd(args []string) error {
	var c common
	fs := flag.NewFlagSet("tack mcp", flag.ContinueOnError)
	c.register(fs, "memory", false)
	agent := fs.String("agent", "", "offer only this agent of the config file (default: every agent, each as the tool ask_<agent>; with no agents configured, demo)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: tack mcp [flags]

Speaks the Model Context Protocol on stdin/stdout: each agent of the config
file is a tool ask_<agent> (prompt, optional session) whose answer streams as
progress notifications; cancelling the call aborts the run. Logs go to stderr.

`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	rt, closeRuntime, err := c.runtime()
	if err != nil {
		return err
	}
	defer closeRuntime()
	var opt mcpserver.Options
	if *agent != "" {
		opt.Agents = []string{*agent}
	}
	srv, err := mcpserver.New(rt, opt)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.Run(ctx, &sdk.StdioTransport{})
}
