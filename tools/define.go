package tools

import (
	"context"
	"encoding/json"
	"sync"
)

// RunFunc is the signature of [Tool.Run], for tools defined with [Define].
type RunFunc func(ctx context.Context, args json.RawMessage, update func(partial string)) (string, error)

// Define returns a Tool made of a fixed spec and a run function: the short
// way to write a tool without declaring a type. Its schema is compiled
// once, at its first Set, and every Set made of it since shares that: a
// tool each session's plugin brings would otherwise keep a compiled
// schema (a few KiB) per session.
func Define(spec Spec, run RunFunc) Tool {
	return &defined{spec: spec, run: run}
}

type defined struct {
	Compiled
	spec Spec
	run  RunFunc
}

// Compiled, embedded in a Tool's type, has the Sets that hold the tool
// share one compiled schema, compiled at its first Set: a tool that many
// sessions hold (a plugin's, an MCP server's) otherwise has its schema
// compiled, a few KiB, for each session's set. The tool's Spec must not
// change once it is in a Set.
type Compiled struct {
	once  sync.Once
	entry *entry
	err   error
}

// compiled is t's entry, compiled at the first call.
func (c *Compiled) compiled(t Tool) (*entry, error) {
	c.once.Do(func() { c.entry, c.err = compile(t) })
	return c.entry, c.err
}

// compiler is a Tool whose type embeds Compiled.
type compiler interface {
	compiled(t Tool) (*entry, error)
}

func (d *defined) Spec() Spec { return d.spec }

func (d *defined) Run(ctx context.Context, args json.RawMessage, update func(string)) (string, error) {
	return d.run(ctx, args, update)
}
