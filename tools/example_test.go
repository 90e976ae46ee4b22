package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tack-run/tack/tools"
)

func Example() {
	upper := tools.Define(tools.Spec{
		Name:        "upper",
		Description: "Return the text in upper case.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
	}, func(_ context.Context, args json.RawMessage, _ func(string)) (string, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(args, &a); err != nil {
			return "", err
		}
		return strings.ToUpper(a.Text), nil
	})
	cat, _ := tools.NewCatalog(upper)
	set, _ := cat.Resolve([]string{"upper"})

	fmt.Println(set.Validate("upper", json.RawMessage(`{"text":42}`)))
	fmt.Println(set.Validate("lower", nil))

	t, _ := set.Get("upper")
	fmt.Printf("%+v\n", tools.Execute(context.Background(), t, json.RawMessage(`{"text":"hi"}`), nil))
	// Output:
	// invalid arguments for upper: /text: got number, want string
	// unknown tool "lower"
	// {Content:HI IsError:false}
}
