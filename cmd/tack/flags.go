package main

import (
	"context"
	"flag"
	"fmt"
	gomaps "maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/config"
	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/builtin"
	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/open"
	"github.com/tack-run/tack/tools/a2a"
	"github.com/tack-run/tack/tools/mcp"
	"github.com/tack-run/tack/tracing"
)

// common holds the flags every subcommand takes.
type common struct {
	store     string
	node      string
	leaseTTL  time.Duration
	config    string
	scriptDir string
	maxImage  int64
	verbose   bool
	// traceContent puts message content on spans (when tracing is on).
	traceContent bool
	// models is the configuration found by runtime; nil when there is none.
	models *config.Config
	// tools says where tools work and how they are sandboxed.
	tools toolFlags
}

// register defines the common flags; shared is set for the commands whose
// sessions belong to many users (serve, node), which read no script file
// unless --script-dir names a directory.
func (c *common) register(fs *flag.FlagSet, defaultStore string, shared bool) {
	fs.StringVar(&c.store, "store", defaultStore, "where sessions are kept: memory, sqlite:PATH (sqlite: for the default file) or postgres://...")
	fs.StringVar(&c.node, "node", "", "this process's name as the owner of stored sessions (default: unique per process; with SQLite a fixed name, since the file lock already allows one writer)")
	fs.DurationVar(&c.leaseTTL, "lease-ttl", tack.DefaultLeaseTTL, "how long this process owns a loaded session without renewing")
	fs.StringVar(&c.config, "config", "", "model configuration file (default: $TACK_CONFIG, else ./tack.json; without one OPENAI_API_KEY configures OpenAI)")
	if shared {
		fs.StringVar(&c.scriptDir, "script-dir", "", "directory that script:<path> models are read from; a path must stay inside it (default: none: only the built-in script:demo and inline scripts)")
	} else {
		fs.StringVar(&c.scriptDir, "script-dir", ".", "directory that script:<path> models are read from; a path must stay inside it (absolute paths, .. and links out of it are unknown models)")
	}
	c.tools.register(fs, shared)
	fs.Int64Var(&c.maxImage, "max-image-bytes", llm.DefaultMaxImageBytes, "largest image a prompt or steering message may carry as a data URL, in decoded bytes\n(a request body is bounded by --max-body-bytes too, where there is one)")
	fs.BoolVar(&c.verbose, "v", false, "log to stderr")
	fs.BoolVar(&c.traceContent, "trace-content", os.Getenv("TACK_TRACE_CONTENT") == "1", "put prompts, answers, tool arguments and results on trace spans (default: $TACK_TRACE_CONTENT=1; tracing is on when OTEL_EXPORTER_OTLP_ENDPOINT is set)")
}

// runtime builds the runtime the flags describe; close stops it and
// closes its store.
// Spans go over OTLP when the OTEL_* variables ask for it (tracing.FromEnv);
// close sends the last of them (waiting up to 5 s for the collector).
func (c *common) runtime(extra ...tack.Option) (rt *tack.Runtime, close func(), err error) {
	tp, err := tracing.FromEnv(context.Background())
	if err != nil {
		return nil, nil, err
	}
	if tp != nil {
		extra = append(extra, tack.WithTracerProvider(tp, tracing.WithContent(c.traceContent)))
	}
	st, err := c.openStore()
	if err == nil {
		rt, err = c.newRuntime(st, extra...)
	}
	close = func() {
		if rt != nil {
			rt.Close()
		}
		if st != nil {
			st.Close()
		}
		if tp != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = tp.Shutdown(ctx) // a collector that is down loses the last spans
			cancel()
		}
	}
	if err != nil {
		close()
		return nil, nil, err
	}
	return rt, close, nil
}

// openStore opens --store; memory means no store at all.
func (c *common) openStore() (store.Store, error) {
	if c.store == "memory" {
		return nil, nil
	}
	st, err := open.Open(context.Background(), c.store)
	if err != nil {
		return nil, fmt.Errorf("--store %s: %w", c.store, err)
	}
	return st, nil
}

func (c *common) newRuntime(st store.Store, extra ...tack.Option) (*tack.Runtime, error) {
	reg := plugins.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		return nil, err
	}
	if c.maxImage <= 0 {
		return nil, fmt.Errorf("--max-image-bytes must be positive, not %d", c.maxImage)
	}
	opts := append([]tack.Option{tack.WithScriptDir(c.scriptDir), tack.WithPluginRegistry(reg), tack.WithMaxImageBytes(c.maxImage)}, extra...)
	if st != nil {
		opts = append(opts, tack.WithStore(st), tack.WithNode(c.nodeName()), tack.WithLeaseTTL(c.leaseTTL))
	}
	cfg, cfgPath, err := config.Discover(c.config)
	if err != nil {
		return nil, err
	}
	toolOpts, err := c.tools.options(c, cfgPath)
	if err != nil {
		return nil, err
	}
	opts = append(opts, toolOpts...)
	if cfg != nil {
		c.models = cfg
		opts = append(opts, tack.WithModels(config.NewResolver(cfg)))
	}
	logger := zap.NewNop()
	if c.verbose {
		if logger, err = zap.NewDevelopment(); err != nil {
			return nil, err
		}
		opts = append(opts, tack.WithLogger(logger))
	}
	opts = append(opts, agentsOption(cfg))
	if cfg != nil {
		for _, name := range slices.Sorted(gomaps.Keys(cfg.A2AAgents)) {
			t, err := a2a.New(name, cfg.A2AAgents[name], os.Getenv)
			if err != nil {
				return nil, err
			}
			opts = append(opts, tack.WithTools(t))
		}
	}
	var servers *mcp.Manager
	if cfg != nil && len(cfg.MCPServers) > 0 {
		// Servers start on first use; the runtime closes them.
		if servers, err = mcp.New(cfg.MCPServers, mcp.Options{Logger: logger}); err != nil {
			return nil, err
		}
		opts = append(opts, tack.WithMCP(servers))
	}
	rt, err := tack.New(opts...)
	if err != nil && servers != nil {
		_ = servers.Close()
	}
	return rt, err
}

// sqliteNode owns the sessions of a SQLite store: the file lock already
// keeps every other process out, so a restarted process takes its
// sessions back at once instead of waiting for its old leases to lapse.
const sqliteNode = "sqlite-single-writer"

// nodeName is --node, or the default for the store.
func (c *common) nodeName() string {
	if c.node != "" || !strings.HasPrefix(c.store, "sqlite") {
		return c.node
	}
	return sqliteNode
}

// retainFlag defines --retain on fs (serve and node).
func retainFlag(fs *flag.FlagSet, d *time.Duration) {
	fs.DurationVar(d, "retain", 0, "delete sessions (with their sub-agents) whose last change is older than this, e.g. 720h;\n"+
		"swept every tenth of it (between 1s and 1h); a session with a run, queued input, a pending approval or question,\n"+
		"or an open event stream is kept (0: keep every session)")
}

// checkRetain refuses a --retain the process cannot honour: negative, or
// with no store to sweep.
func checkRetain(d time.Duration, store string) error {
	switch {
	case d < 0:
		return fmt.Errorf("--retain %s: must not be negative", d)
	case d > 0 && store == "memory":
		return fmt.Errorf("--retain %s needs a store (--store sqlite:PATH or postgres://...): memory sessions end with the process", d)
	}
	return nil
}

// retain sweeps rt's sessions older than d (Runtime.Retain) until the
// returned stop is called, which waits for a sweep under way. d 0 does
// nothing.
func retain(ctx context.Context, rt *tack.Runtime, d time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { rt.Retain(ctx, d) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// agentsOption names the configuration's agents; a configuration that
// names none (or none at all) has the built-in demo agent.
func agentsOption(cfg *config.Config) tack.Option {
	if cfg == nil || len(cfg.Agents) == 0 {
		return tack.WithAgents(map[string]tack.Agent{tack.DemoAgent: tack.Demo()}, "")
	}
	agents := make(map[string]tack.Agent, len(cfg.Agents))
	for name, a := range cfg.Agents {
		ta := tack.Agent{Description: a.Description, Model: a.Model, System: a.System, Tools: a.Tools, Context: a.Context}
		for _, p := range a.Plugins {
			ta.Plugins = append(ta.Plugins, plugins.Config{Name: p.Name, Config: p.Config})
		}
		if s := a.Subagents; s != nil {
			ta.Subagents = &tack.SubagentConfig{MaxDepth: s.MaxDepth, Model: s.Model, Tools: s.Tools, InheritPlugins: s.InheritPlugins}
		}
		agents[name] = ta
	}
	return tack.WithAgents(agents, cfg.DefaultAgent)
}
