package policy_test

import (
	"fmt"

	"github.com/tack-run/tack/policy"
)

func Example() {
	p := &policy.Policy{
		Grants: policy.Grants{"*": {Models: []string{"openai/*"}, Tools: []string{"echo", "read_file"}}, "alice": {Tools: []string{"*"}}},
		Limits: policy.Limits{"*": {MaxSessions: 20, RequestsPerMinute: 600}, "alice": {MaxSessions: 100}},
	}
	bob, alice := p.Grant("bob"), p.Grant("alice")
	fmt.Println(bob.Tool("shell"), bob.Tool("echo"), bob.Model("openai/gpt-4o"), bob.Model("local/qwen"), bob.Scripts())
	fmt.Println(alice.Tool("shell"), alice.Tool("mcp:search"), alice.Model("local/qwen"))
	fmt.Printf("%+v\n", p.Limit("alice"))
	// Output:
	// false true true false true
	// true true false
	// {MaxSessions:100 MaxRunning:0 RequestsPerMinute:600 MaxOpenRequests:0}
}
