package builtin_test

import (
	"encoding/json"
	"fmt"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/builtin"
)

// A program registers the built-ins once and builds each session's
// plugins from create_session's configuration.
func ExampleRegister() {
	reg := plugins.NewRegistry()
	if err := builtin.Register(reg); err != nil {
		panic(err)
	}
	ps, err := reg.Build([]plugins.Config{
		{Name: "approval", Config: json.RawMessage(`{"safe_commands": ["ls", "wc -l"]}`)},
	})
	if err != nil {
		panic(err)
	}
	chain := plugins.NewChain(0, ps...)
	for _, cmd := range []string{"ls -la", "git push --force", "ls; rm -rf /"} {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		out := chain.Run(&plugins.Event{Hook: plugins.BeforeTool,
			Call: &eventsv1.ToolCall{Id: "c-1", Name: "shell", Args: &eventsv1.RawJSON{Json: args}}})
		if out.Stop == nil {
			fmt.Printf("%-18s runs\n", cmd)
			continue
		}
		fmt.Printf("%-18s %s (family %q)\n", cmd, out.Stop.Action.Kind, out.Stop.Action.Family)
	}
	_, err = reg.Build([]plugins.Config{{Name: "limits", Config: json.RawMessage(`{"max_turn": 5}`)}})
	fmt.Println(err)
	// Output:
	// ls -la             runs
	// git push --force   hold_for_approval (family "git")
	// ls; rm -rf /       hold_for_approval (family "ls; rm -rf /")
	// plugin "limits": unknown field "max_turn" in config
}
