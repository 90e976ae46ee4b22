package main

import (
	"context"
	"encoding/json"

	"github.com/tack-run/tack/llm"
	"github.com/tack-run/tack/llm/script"

	"github.com/tack-run/tack/bench/internal/measure"
)

// turn is one turn of a scripted model (docs/protocol.md#the-scripted-model).
type turn struct {
	Text         string `json:"text,omitempty"`
	ChunkSize    int    `json:"chunk_size,omitempty"`
	ChunkDelayMS int    `json:"chunk_delay_ms,omitempty"`
	ToolCalls    []call `json:"tool_calls,omitempty"`
	Usage        usage  `json:"usage"`
}

type call struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

type usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// fixedUsage is what every scripted turn of every runtime reports.
var fixedUsage = usage{InputTokens: 10, OutputTokens: 5}

// models resolves "bench:<name>" to a scripted model playing a script
// parsed once; observe, when set, sees every request first.
type models struct {
	scripts map[string]*script.Script
	observe func(*llm.Request)
}

func newModels(named map[string][]turn) *models {
	m := &models{scripts: map[string]*script.Script{}}
	for name, turns := range named {
		for i := range turns {
			turns[i].Usage = fixedUsage
		}
		data, err := json.Marshal(map[string]any{"turns": turns, "when_exhausted": "repeat_last"})
		if err != nil {
			measure.Fatal("%v", err)
		}
		s, err := script.Parse(data)
		if err != nil {
			measure.Fatal("script %s: %v", name, err)
		}
		m.scripts["bench:"+name] = s
	}
	return m
}

// Resolve implements llm.Resolver.
func (m *models) Resolve(name string, _ json.RawMessage) (*llm.Model, error) {
	s, ok := m.scripts[name]
	if !ok {
		return nil, &llm.UnknownModelError{Name: name}
	}
	var prov llm.Provider = script.New(s)
	if m.observe != nil {
		prov = observed{prov, m.observe}
	}
	return &llm.Model{Name: name, ID: name, Provider: prov}, nil
}

// observed calls see with each request before the provider streams it.
type observed struct {
	llm.Provider
	see func(*llm.Request)
}

func (o observed) Stream(ctx context.Context, req *llm.Request, emit func(llm.Chunk)) (*llm.Response, error) {
	o.see(req)
	return o.Provider.Stream(ctx, req, emit)
}
