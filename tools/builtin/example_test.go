package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tack-run/tack/tools"
	"github.com/tack-run/tack/tools/builtin"
)

func ExampleDemo() {
	cat, err := tools.NewCatalog(builtin.Demo()...)
	if err != nil {
		panic(err)
	}
	set, _ := cat.Resolve(builtin.DemoNames())
	for _, sp := range set.Specs() {
		fmt.Println(sp.Name, sp.Kind)
	}
	echo, _ := set.Get("echo")
	fmt.Println(tools.Execute(context.Background(), echo, json.RawMessage(`{"text":"hi"}`), nil).Content)
	// Output:
	// echo killable
	// shell killable
	// sleep killable
	// sleep_immune immune
	// sleep_stubborn killable
	// hi
}
