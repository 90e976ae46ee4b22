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
	d := &defined{spec: spec, run: run}
	d.entry = sync.OnceValues(func() (*entry, error) { return compile(d) })
	return d
}

type defined struct {
	spec  Spec
	run   RunFunc
	entry func() (*entry, error)
}

func (d *defined) Spec() Spec { return d.spec }

func (d *defined) Run(ctx context.Context, args json.RawMessage, update func(string)) (string, error) {
	return d.run(ctx, args, update)
}
