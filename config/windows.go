package config

import (
	_ "embed"
	"encoding/json"
	"strings"
	"sync"
)

// windowsJSON is the built-in table of context windows, in tokens, by
// model name: exact names, and patterns ending in "*" that match any name
// starting with what comes before the "*". Values are the vendors'
// published windows (OpenAI's and Anthropic's model pages, the models'
// Hugging Face configurations for open-weight families).
//
//go:embed windows.json
var windowsJSON []byte

// windowTable is the parsed table.
type windowTable struct {
	exact    map[string]int64
	patterns map[string]int64 // prefix (without "*") → window
}

// windows parses the embedded table once; it is read-only afterwards.
var windows = sync.OnceValue(func() windowTable {
	var raw map[string]int64
	if err := json.Unmarshal(windowsJSON, &raw); err != nil {
		panic("config: windows.json: " + err.Error()) // the tests parse it
	}
	t := windowTable{exact: map[string]int64{}, patterns: map[string]int64{}}
	for k, v := range raw {
		k = strings.ToLower(k)
		if prefix, ok := strings.CutSuffix(k, "*"); ok {
			t.patterns[prefix] = v
		} else {
			t.exact[k] = v
		}
	}
	return t
})

// BuiltinWindow returns the context window of model from the built-in
// table, 0 when the table does not know it. The name is matched without
// regard to case, as given and by its last path segment (so
// "meta-llama/Llama-3.1-8B-Instruct" and "openai/gpt-4o" are found): an
// exact entry first, then the longest matching pattern ("gpt-4o-mini"
// takes "gpt-4o*" over "gpt-4*").
func BuiltinWindow(model string) int64 {
	t := windows()
	full := strings.ToLower(model)
	names := []string{full}
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		names = append(names, full[i+1:])
	}
	for _, n := range names {
		if w, ok := t.exact[n]; ok {
			return w
		}
	}
	best, window := -1, int64(0)
	for _, n := range names {
		for prefix, w := range t.patterns {
			if len(prefix) > best && strings.HasPrefix(n, prefix) {
				best, window = len(prefix), w
			}
		}
	}
	return window
}
