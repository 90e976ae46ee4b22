package plugins_test

import (
	"encoding/json"
	"fmt"
	"slices"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
)

// forbid is a custom plugin: it blocks the tools its configuration names
// and reports each block as a plugin_event.
type forbid struct {
	Tools []string `json:"tools"`
}

// newForbid is forbid's Factory: strict configuration, with defaults.
func newForbid(raw json.RawMessage) (plugins.Plugin, error) {
	f := &forbid{Tools: []string{"shell"}}
	if err := plugins.DecodeConfig(raw, f); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *forbid) Name() string          { return "forbid" }
func (f *forbid) Priority() int         { return 20 }
func (f *forbid) Hooks() []plugins.Hook { return []plugins.Hook{plugins.BeforeTool} }

func (f *forbid) Handle(ev *plugins.Event) []plugins.Action {
	name := ev.Call.GetName()
	if !slices.Contains(f.Tools, name) {
		return nil
	}
	payload, _ := json.Marshal(map[string]string{"tool": name})
	return []plugins.Action{
		{Kind: plugins.Emit, Name: "forbidden", Payload: payload},
		{Kind: plugins.BlockTool, Reason: name + " is not allowed in this session"},
	}
}

// A custom plugin is a Factory registered under a name; each session gets
// its own instance from its configuration, and the chain turns the
// plugin's actions into an Outcome the session acts on.
func Example() {
	reg := plugins.NewRegistry()
	if err := reg.Register("forbid", newForbid); err != nil {
		panic(err)
	}
	ps, err := reg.Build([]plugins.Config{{Name: "forbid", Config: json.RawMessage(`{"tools": ["write_file"]}`)}})
	if err != nil {
		panic(err)
	}
	chain := plugins.NewChain(0, ps...)

	for _, tool := range []string{"read_file", "write_file"} {
		out := chain.Run(&plugins.Event{Hook: plugins.BeforeTool, Session: "s1", RunID: "r-1",
			Call: &eventsv1.ToolCall{Id: "c-1", Name: tool, Args: &eventsv1.RawJSON{Json: []byte(`{"path":"a.txt"}`)}}})
		if out.Stop == nil {
			fmt.Printf("%s: runs\n", tool)
			continue
		}
		fmt.Printf("%s: %s by %s (%s)\n", tool, out.Stop.Action.Kind, out.Stop.Plugin, out.Stop.Action.Reason)
		for _, e := range out.Emits {
			fmt.Printf("  plugin_event %s %s %s\n", e.Plugin, e.Name, e.Payload)
		}
	}

	_, err = reg.Build([]plugins.Config{{Name: "forbid", Config: json.RawMessage(`{"tool": "shell"}`)}})
	fmt.Println(err)
	_, err = reg.Build([]plugins.Config{{Name: "forbidden"}})
	fmt.Println(err)
	// Output:
	// read_file: runs
	// write_file: block_tool by forbid (write_file is not allowed in this session)
	//   plugin_event forbid forbidden {"tool":"write_file"}
	// plugin "forbid": unknown field "tool" in config
	// unknown plugin "forbidden" (registered: forbid)
}
