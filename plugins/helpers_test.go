package plugins_test

import (
	"sync/atomic"

	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/tools"
)

// fake is a test plugin that answers with handle and counts its calls.
type fake struct {
	name     string
	priority int
	hooks    []plugins.Hook
	handle   func(ev *plugins.Event) []plugins.Action
	calls    atomic.Int32
}

func (f *fake) Name() string          { return f.name }
func (f *fake) Priority() int         { return f.priority }
func (f *fake) Hooks() []plugins.Hook { return f.hooks }

func (f *fake) Handle(ev *plugins.Event) []plugins.Action {
	f.calls.Add(1)
	if f.handle == nil {
		return nil
	}
	return f.handle(ev)
}

// answering returns a fake on hook h that always answers acts.
func answering(name string, priority int, h plugins.Hook, acts ...plugins.Action) *fake {
	return &fake{name: name, priority: priority, hooks: []plugins.Hook{h},
		handle: func(*plugins.Event) []plugins.Action { return acts }}
}

// withTools is a fake that brings tools.
type withTools struct {
	*fake
	tools []tools.Tool
}

func (w withTools) Tools() []tools.Tool { return w.tools }
