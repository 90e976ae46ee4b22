package main

import (
	"context"
	"errors"
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
	"github.com/tack-run/tack/metrics"
	"github.com/tack-run/tack/server/auth"
	httpserver "github.com/tack-run/tack/server/http"
	"github.com/tack-run/tack/web"
)

// serve runs the HTTP server (docs/http.md) — the browser UI, REST,
// Server-Sent Events, AG-UI and /metrics — until SIGINT or SIGTERM, then shuts down
// gracefully; stored sessions stay stored.
func serve(args []string) error {
	var c common
	var addr, authFile, origins string
	var maxBody int64
	var ui bool
	var passivate time.Duration
	fs := flag.NewFlagSet("tack serve", flag.ContinueOnError)
	c.register(fs, "sqlite:")
	fs.StringVar(&addr, "addr", "127.0.0.1:7700", "address to listen on; without --auth only a loopback address")
	fs.StringVar(&authFile, "auth", "", `JSON file of static tokens and JWT settings: {"tokens": {"TOKEN": "user"}, "jwt": {"hs256_secret_env": "VAR", "issuer": "...", "audience": "..."}}`)
	fs.StringVar(&origins, "cors-origins", "", "comma-separated origins browsers may call from (* for any; default: none, no CORS)")
	fs.Int64Var(&maxBody, "max-body-bytes", httpserver.DefaultMaxBodyBytes, "largest request body accepted")
	fs.BoolVar(&ui, "ui", true, "serve the browser UI at / (--ui=false for the API alone)")
	fs.DurationVar(&passivate, "passivate-after", tack.DefaultPassivateAfter, "stop a stored session quiet this long (no run, nothing queued, no open event stream) and restore it on its next request (0: never)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if passivate < 0 {
		return fmt.Errorf("--passivate-after %s: must not be negative", passivate)
	}
	var opts []httpserver.Option
	if authFile != "" {
		a, err := auth.Load(authFile)
		if err != nil {
			return err
		}
		opts = append(opts, httpserver.WithAuth(a))
	} else if err := loopbackOnly(addr); err != nil {
		return err
	}
	if ui {
		opts = append(opts, httpserver.WithUI(web.FS()))
	}
	if origins != "" {
		opts = append(opts, httpserver.WithCORSOrigins(strings.Split(origins, ",")...))
	}
	log := zap.NewNop()
	if c.verbose {
		var err error
		if log, err = zap.NewDevelopment(); err != nil {
			return err
		}
	}
	m := metrics.New()
	opts = append(opts, httpserver.WithMaxBodyBytes(maxBody), httpserver.WithLogger(log), httpserver.WithMetrics(m))
	rt, closeRuntime, err := c.runtime(tack.WithMetrics(m), tack.WithPassivateAfter(passivate))
	if err != nil {
		return err
	}
	defer closeRuntime()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "tack serve: listening on http://%s\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return httpserver.New(rt, opts...).Serve(ctx, ln)
}

// loopbackOnly refuses an address other than loopback: without --auth
// anyone who can connect could drive every session.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return errors.New("--addr " + addr + " is not a loopback address, and without --auth anyone who reaches it could drive every session: " +
		"listen on 127.0.0.1 or [::1], or add --auth FILE with tokens, e.g. {\"tokens\": {\"<a long random token>\": \"alice\"}} (see docs/http.md)")
}
