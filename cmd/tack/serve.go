package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/cluster"
	"github.com/tack-run/tack/cluster/front"
	"github.com/tack-run/tack/metrics"
	"github.com/tack-run/tack/metrics/otlp"
	"github.com/tack-run/tack/server/a2aserver"
	"github.com/tack-run/tack/server/auth"
	httpserver "github.com/tack-run/tack/server/http"
	"github.com/tack-run/tack/store/open"
	"github.com/tack-run/tack/web"
)

// serve runs the HTTP server (docs/http.md) — the browser UI, REST,
// Server-Sent Events, AG-UI and /metrics — until SIGINT or SIGTERM, then shuts down
// gracefully; stored sessions stay stored. With --cluster it is a front
// end of a cluster: it hosts no session, and every session command goes
// to the session's member (docs/remote.md).
func serve(args []string) error {
	var c common
	var addr, authFile, origins, hosts, clusterHost, a2aTasks string
	var maxBody int64
	var ui bool
	var passivate, retention time.Duration
	var cf clusterFlags
	fs := flag.NewFlagSet("tack serve", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: tack serve [flags]\n"+
			"       tack serve --cluster NAME --store postgres://... --cluster-seeds HOST:PORT,... [flags]\n\n"+
			"Serves the HTTP API (REST, Server-Sent Events, WebSocket, AG-UI) and the browser UI\n"+
			"(docs/http.md), and the agents of the config file over A2A at /a2a/{agent} (docs/a2a.md) and\n"+
			"MCP at /mcp (docs/mcp.md). With --cluster it is a front end of a cluster of `tack node --cluster`\n"+
			"members: it joins the cluster as a client and hosts no session; every session command\n"+
			"goes to the member the session runs on, event streams follow a session from member to\n"+
			"member, and the list and the owners of sessions are read from the members' PostgreSQL\n"+
			"store. Front ends keep no state: run as many as needed (docs/remote.md).\n\nflags:\n")
		fs.PrintDefaults()
	}
	c.register(fs, "sqlite:", true)
	fs.StringVar(&addr, "addr", "127.0.0.1:7700", "address to listen on; without --auth only a loopback address")
	fs.StringVar(&authFile, "auth", "", `JSON file of users and what they may do: {"tokens": {"TOKEN": "user"}, `+
		`"jwt": {"hs256_secret_env": "VAR", "jwks_url": "https://...", "issuer": "...", "audience": "..."}, `+
		`"grants": {"*": {"models": [...], "tools": [...], "scripts": true}, "USER": {...}}, `+
		`"limits": {"*": {"max_sessions": N, "max_running": N, "requests_per_minute": N, "max_open_requests": N}, "USER": {...}}} `+
		`(without grants every user has every configured model, scripts, and every tool but shell and MCP tools; see docs/security.md)`)
	fs.StringVar(&origins, "cors-origins", "", "comma-separated origins (scheme://host[:port]) whose web pages may call the server: CORS headers, and\n"+
		"their POST/DELETE requests and WebSockets are not refused as cross-origin (* for any, only with --auth;\n"+
		"default: none, only the server's own origin); see docs/security.md")
	fs.StringVar(&hosts, "allowed-hosts", "", "comma-separated Host names (optionally with :port) answered, others 403 forbidden (default: with --auth\n"+
		"any; without it only localhost, 127.x.y.z and [::1], which this may narrow); see docs/security.md")
	fs.Int64Var(&maxBody, "max-body-bytes", httpserver.DefaultMaxBodyBytes, "largest request body accepted")
	fs.StringVar(&a2aTasks, "a2a-tasks", "", "directory the A2A tasks are kept in, a file each, so that they survive a restart (default: a2a-tasks/ beside\n"+
		"the SQLite file of --store sqlite:...; with memory or postgres: none, the tasks are kept in memory) (docs/a2a.md)")
	fs.BoolVar(&ui, "ui", true, "serve the browser UI at / (--ui=false for the API alone)")
	fs.DurationVar(&passivate, "passivate-after", tack.DefaultPassivateAfter, "stop a stored session quiet this long (no run, nothing queued, no open event stream) and restore it on its next request; with --store memory, park it as a record in memory, and make new sessions parked until their first request (0: never)")
	cf.register(fs, "serve the sessions of the protoactor cluster NAME as a front end that hosts none (needs --store postgres://..., the members' store)", false)
	retainFlag(fs, &retention)
	fs.StringVar(&clusterHost, "cluster-host", "127.0.0.1", "with --cluster: the host this front end's protoactor remote listens on (a free port), which members dial to answer it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("tack serve takes no arguments, got %q (flags come before them?)", fs.Args())
	}
	cl, err := cf.config(c.store, "a front end reads the sessions' owners and list from the members' PostgreSQL store")
	if err != nil {
		return err
	}
	if passivate < 0 {
		return fmt.Errorf("--passivate-after %s: must not be negative", passivate)
	}
	if maxBody <= 0 { // every request with a body would be 413, every WebSocket frame too large
		return fmt.Errorf("--max-body-bytes must be positive, not %d", maxBody)
	}
	if err := checkRetain(retention, c.store); err != nil {
		return err
	}
	if retention > 0 && cl.Name != "" {
		return fmt.Errorf("--retain with --cluster: a front end hosts no session; give --retain to the members (tack node)")
	}
	var opts []httpserver.Option
	var rtOpts []tack.Option
	if authFile != "" && c.tools.workspace != "" {
		return fmt.Errorf("--workspace %s with --auth: every user's sessions would work in that one directory, "+
			"reading and changing each other's files; leave --workspace out for a workspace per session (--workspace-root, see docs/sandbox.md)", c.tools.workspace)
	}
	if authFile != "" {
		a, err := auth.Load(authFile)
		if err != nil {
			return err
		}
		// Many users: each may use what the file grants them (by default
		// no shell and no MCP tools), as much as it allows.
		opts = append(opts, httpserver.WithAuth(a))
		c.tools.deny = append(c.tools.deny, authFile)
		rtOpts = append(rtOpts, tack.WithPolicy(a.Policy()))
	} else if err := loopbackOnly(addr); err != nil {
		return err
	}
	if ui {
		opts = append(opts, httpserver.WithUI(web.FS()))
	}
	if origins != "" {
		list := splitList(origins)
		if err := httpserver.CheckOrigins(list, authFile != ""); err != nil {
			return fmt.Errorf("--cors-origins: %w", err)
		}
		opts = append(opts, httpserver.WithCORSOrigins(list...))
	}
	if hosts != "" {
		list := splitList(hosts)
		if err := httpserver.CheckAllowedHosts(list, authFile != ""); err != nil {
			return fmt.Errorf("--allowed-hosts: %w", err)
		}
		opts = append(opts, httpserver.WithAllowedHosts(list...))
	}
	log := zap.NewNop()
	if c.verbose {
		var err error
		if log, err = zap.NewDevelopment(); err != nil {
			return err
		}
	}
	m := metrics.New()
	mp, err := otlp.FromEnv(context.Background(), m.Gatherer())
	if err != nil {
		return err
	}
	if mp != nil { // OTLP is on: the metrics go there too, sent a last time on exit
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = mp.Shutdown(ctx)
		}()
	}
	opts = append(opts, httpserver.WithMaxBodyBytes(maxBody), httpserver.WithLogger(log), httpserver.WithMetrics(m))
	rtOpts = append(rtOpts, tack.WithMetrics(m), tack.WithPassivateAfter(passivate))
	if cl.Name != "" {
		sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
			return slog.New(slog.DiscardHandler)
		}))
		defer sys.Shutdown()
		cc, err := cluster.Client(sys, clusterHost, cl)
		if err != nil {
			return fmt.Errorf("--cluster %s: %w", cl.Name, err)
		}
		defer cluster.Close(cc)
		rtOpts = append(rtOpts, tack.WithActorSystem(sys), tack.WithSessionsElsewhere(front.New(cc)))
		fmt.Fprintf(os.Stderr, "tack serve: a front end of cluster %s (client at %s), hosting no session\n", cl.Name, sys.Address())
	}
	rt, closeRuntime, err := c.runtime(rtOpts...)
	if err != nil {
		return err
	}
	defer closeRuntime()
	if a2aTasks == "" {
		if a2aTasks, err = besideStore(c.store, "a2a-tasks"); err != nil {
			return err
		}
	}
	a2a, err := a2aserver.New(rt, a2aserver.Options{TaskDir: a2aTasks, Auth: authFile != "", User: httpserver.User, Logger: log})
	if err != nil {
		return err
	}
	opts = append(opts, httpserver.WithA2A(a2a))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "tack serve: listening on http://%s\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer retain(ctx, rt, retention)()
	return httpserver.New(rt, opts...).Serve(ctx, ln)
}

// besideStore is the directory name beside the SQLite file of the store
// spec; "" for other stores.
func besideStore(spec, name string) (string, error) {
	if spec != "sqlite" && !strings.HasPrefix(spec, "sqlite:") {
		return "", nil
	}
	path := strings.TrimPrefix(strings.TrimPrefix(spec, "sqlite"), ":")
	if path == "" {
		var err error
		if path, err = open.DefaultSQLitePath(); err != nil {
			return "", err
		}
	}
	return filepath.Join(filepath.Dir(path), name), nil
}

// splitList splits a comma-separated flag value, trimming spaces and
// dropping empty entries.
func splitList(v string) []string {
	var out []string
	for f := range strings.SplitSeq(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
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
