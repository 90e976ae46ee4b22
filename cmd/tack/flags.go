package main

import (
	"flag"
	"fmt"

	"go.uber.org/zap"

	"github.com/tack-run/tack"
	"github.com/tack-run/tack/llm/config"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/builtin"
)

// common holds the flags every subcommand takes.
type common struct {
	store     string
	config    string
	scriptDir string
	verbose   bool
	// models is the configuration found by runtime; nil when there is none.
	models *config.Config
}

func (c *common) register(fs *flag.FlagSet, defaultStore string) {
	fs.StringVar(&c.store, "store", defaultStore, "where sessions are kept: memory")
	fs.StringVar(&c.config, "config", "", "model configuration file (default: $TACK_CONFIG, else ./tack.json; without one OPENAI_API_KEY configures OpenAI)")
	fs.StringVar(&c.scriptDir, "script-dir", "", "directory that relative script:<path> models are read from (default: the working directory)")
	fs.BoolVar(&c.verbose, "v", false, "log to stderr")
}

// runtime builds the runtime the flags describe.
func (c *common) runtime() (*tack.Runtime, error) {
	if c.store != "memory" {
		return nil, fmt.Errorf("--store %s: only memory is available in this build", c.store)
	}
	reg := plugins.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		return nil, err
	}
	opts := []tack.Option{tack.WithScriptDir(c.scriptDir), tack.WithPluginRegistry(reg)}
	cfg, _, err := config.Discover(c.config)
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		c.models = cfg
		opts = append(opts, tack.WithModels(config.NewResolver(cfg)))
	}
	if c.verbose {
		l, err := zap.NewDevelopment()
		if err != nil {
			return nil, err
		}
		opts = append(opts, tack.WithLogger(l))
	}
	return tack.New(opts...)
}
