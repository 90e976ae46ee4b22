package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"echo", "echo", true},
		{"echo", "echoes", false},
		{"*", "anything/at all", true},
		{"openai/*", "openai/gpt-4o", true},
		{"openai/*", "local/openai", false},
		{"search/*", "search/query", true},
		{"*/read", "fs/read", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"ab*ba", "aba", false},
		{"ab*ba", "abba", true},
		{"gpt-4o*", "gpt-4o-mini", true},
	} {
		if got := Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

// grants reads the grants part of an auth file.
func grants(t *testing.T, s string) Grants {
	t.Helper()
	var g Grants
	if err := json.Unmarshal([]byte(s), &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGrant(t *testing.T) {
	type check struct {
		kind, name string // kind: model, tool, scripts
		want       bool
	}
	for _, tc := range []struct {
		name, grants, user string
		checks             []check
	}{
		{"no grants: the default", `{}`, "bob", []check{
			{"model", "openai/gpt-4o", true}, {"scripts", "", true},
			{"tool", "echo", true}, {"tool", "read_file", true}, {"tool", "subagent", true},
			{"tool", "shell", false}, {"tool", "fs/read", false}, {"tool", "mcp:fs", false},
		}},
		{"the * entry", `{"*": {"models": ["openai/*"], "tools": ["echo"], "scripts": false}}`, "bob", []check{
			{"model", "openai/gpt-4o", true}, {"model", "local/qwen", false}, {"scripts", "", false},
			{"tool", "echo", true}, {"tool", "read_file", false}, {"tool", "shell", false},
		}},
		{"a user's entry overrides * key by key", `{"*": {"models": ["openai/*"], "tools": ["echo"], "scripts": false}, "alice": {"tools": ["*"]}}`, "alice", []check{
			{"model", "local/qwen", false}, {"scripts", "", false},
			{"tool", "shell", true}, {"tool", "fs/read", true}, {"tool", "mcp:fs", true},
		}},
		{"another user keeps *", `{"*": {"tools": ["echo"]}, "alice": {"tools": ["*"]}}`, "bob", []check{
			{"tool", "echo", true}, {"tool", "shell", false},
		}},
		{"a user's key over the default", `{"alice": {"scripts": false}}`, "alice", []check{
			{"scripts", "", false}, {"model", "anything", true}, {"tool", "shell", false},
		}},
		{"an empty list grants nothing", `{"*": {"tools": []}}`, "bob", []check{
			{"tool", "echo", false},
		}},
		{"a user may be granted less than *", `{"*": {"tools": ["*"]}, "bob": {"tools": ["echo"]}}`, "bob", []check{
			{"tool", "echo", true}, {"tool", "shell", false},
		}},
		{"an MCP group by its server's pattern", `{"*": {"tools": ["search/*", "mcp:fs"]}}`, "bob", []check{
			{"tool", "mcp:search", true}, {"tool", "search/query", true}, {"tool", "mcp:fs", true},
			{"tool", "mcp:other", false}, {"tool", "other/read", false},
		}},
		{"a group covers each of its tools", `{"*": {"tools": ["mcp:fs", "mcp:s*"]}}`, "bob", []check{
			{"tool", "fs/read", true}, {"tool", "search/query", true}, {"tool", "fsx/read", false}, {"tool", "other/read", false},
		}},
		{"one tool of a server is not the group", `{"*": {"tools": ["search/query"]}}`, "bob", []check{
			{"tool", "search/query", true}, {"tool", "mcp:search", false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := grants(t, tc.grants).For(tc.user)
			for _, c := range tc.checks {
				var got bool
				switch c.kind {
				case "model":
					got = g.Model(c.name)
				case "tool":
					got = g.Tool(c.name)
				case "scripts":
					got = g.Scripts()
				}
				if got != c.want {
					t.Errorf("%s %q = %v, want %v", c.kind, c.name, got, c.want)
				}
			}
		})
	}
}

func TestNilAllowsEverything(t *testing.T) {
	var p *Policy
	g := p.Grant("bob")
	if !g.Model("x") || !g.Tool("shell") || !g.Tool("mcp:fs") || !g.Scripts() {
		t.Fatal("a nil policy refused something")
	}
	if p.Limit("bob") != (Limit{}) {
		t.Fatal("a nil policy has limits")
	}
}

func TestLimits(t *testing.T) {
	l := Limits{"*": {MaxSessions: 5, RequestsPerMinute: 60, MaxOpenRequests: 10}, "alice": {MaxSessions: 50, MaxRunning: 2, MaxOpenRequests: 100}}
	if got, want := l.For("alice"), (Limit{MaxSessions: 50, MaxRunning: 2, RequestsPerMinute: 60, MaxOpenRequests: 100}); got != want {
		t.Errorf("alice: %+v, want %+v", got, want)
	}
	if got, want := l.For("bob"), (Limit{MaxSessions: 5, RequestsPerMinute: 60, MaxOpenRequests: 10}); got != want {
		t.Errorf("bob: %+v, want %+v", got, want)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *Policy
		err  string
	}{
		{"nil", nil, ""},
		{"fine", &Policy{Grants: Grants{"*": {Tools: []string{"echo"}}}, Limits: Limits{"*": {MaxRunning: 1}}}, ""},
		{"empty pattern", &Policy{Grants: Grants{"bob": {Models: []string{""}}}}, `grants["bob"]: an empty name or pattern`},
		{"negative limit", &Policy{Limits: Limits{"*": {RequestsPerMinute: -1}}}, `limits["*"]: requests_per_minute must not be negative, not -1`},
		{"negative open requests", &Policy{Limits: Limits{"bob": {MaxOpenRequests: -2}}}, `limits["bob"]: max_open_requests must not be negative, not -2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("Validate = %v, want %q", err, tc.err)
			}
		})
	}
}
