package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Validate reports the first thing wrong with s, turns numbered from 1.
// Parse calls it; call it on a Script built in Go. An empty WhenExhausted
// counts as RepeatLast.
func (s *Script) Validate() error {
	switch s.WhenExhausted {
	case "", RepeatLast:
		if len(s.Turns) == 0 {
			return errors.New("when_exhausted repeat_last needs at least one turn")
		}
	case Fail, Echo:
	default:
		return fmt.Errorf("unknown when_exhausted %q (want repeat_last, error or echo)", s.WhenExhausted)
	}
	if s.ContextWindow < 0 {
		return fmt.Errorf("context_window is negative (%d)", s.ContextWindow)
	}
	for i, t := range s.Turns {
		if err := t.validate(); err != nil {
			return fmt.Errorf("turn %d: %w", i+1, err)
		}
	}
	return nil
}

func (t *Turn) validate() error {
	for _, f := range []struct {
		name  string
		value int64
	}{
		{"delay_ms", t.DelayMS},
		{"chunk_size", int64(t.ChunkSize)},
		{"chunk_delay_ms", t.ChunkDelayMS},
		{"stall_ms", t.StallMS},
	} {
		if f.value < 0 {
			return fmt.Errorf("%s is negative (%d)", f.name, f.value)
		}
	}
	if u := t.Usage; u != nil && (u.InputTokens < 0 || u.OutputTokens < 0) {
		return fmt.Errorf("usage is negative (%d input, %d output tokens)", u.InputTokens, u.OutputTokens)
	}
	if e := t.Error; e != nil && e.Status != 0 && (e.Status < 100 || e.Status > 599) {
		return fmt.Errorf("error status %d is not an HTTP status (100-599, or 0 for a transport failure)", e.Status)
	}
	for j, c := range t.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("tool call %d has no name", j+1)
		}
		if a := bytes.TrimSpace(c.Args); len(a) > 0 && (a[0] != '{' || !json.Valid(a)) {
			return fmt.Errorf("tool call %d (%s): args must be a JSON object, got %s", j+1, c.Name, a)
		}
	}
	return nil
}
