package main

import (
	"flag"
	"fmt"

	"go.uber.org/zap"

	"github.com/tack-run/tack"
)

// common holds the flags every subcommand takes.
type common struct {
	store     string
	scriptDir string
	verbose   bool
}

func (c *common) register(fs *flag.FlagSet, defaultStore string) {
	fs.StringVar(&c.store, "store", defaultStore, "where sessions are kept: memory")
	fs.StringVar(&c.scriptDir, "script-dir", "", "directory that relative script:<path> models are read from (default: the working directory)")
	fs.BoolVar(&c.verbose, "v", false, "log to stderr")
}

// runtime builds the runtime the flags describe.
func (c *common) runtime() (*tack.Runtime, error) {
	if c.store != "memory" {
		return nil, fmt.Errorf("--store %s: only memory is available in this build", c.store)
	}
	opts := []tack.Option{tack.WithScriptDir(c.scriptDir)}
	if c.verbose {
		l, err := zap.NewDevelopment()
		if err != nil {
			return nil, err
		}
		opts = append(opts, tack.WithLogger(l))
	}
	return tack.New(opts...)
}
