package tools

import (
	"context"
	"encoding/json"
)

// RunFunc is the signature of [Tool.Run], for tools defined with [Define].
type RunFunc func(ctx context.Context, args json.RawMessage, update func(partial string)) (string, error)

// Define returns a Tool made of a fixed spec and a run function: the short
// way to write a tool without declaring a type.
func Define(spec Spec, run RunFunc) Tool {
	return defined{spec: spec, run: run}
}

type defined struct {
	spec Spec
	run  RunFunc
}

func (d defined) Spec() Spec { return d.spec }

func (d defined) Run(ctx context.Context, args json.RawMessage, update func(string)) (string, error) {
	return d.run(ctx, args, update)
}
