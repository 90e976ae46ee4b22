package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerConfig is one entry of the config file's "mcp_servers": a server
// started as a child process (Command, Env) and spoken to over stdio, or
// one reached over streamable HTTP (URL, Headers).
type ServerConfig struct {
	// Command is the program and its arguments, e.g.
	// ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"].
	Command []string `json:"command,omitempty"`
	// Env is added to Tack's own environment for the child process.
	Env map[string]string `json:"env,omitempty"`
	// URL is the server's streamable HTTP endpoint, e.g.
	// "http://127.0.0.1:9000/mcp".
	URL string `json:"url,omitempty"`
	// Headers are sent with every HTTP request to URL (an Authorization
	// header, say).
	Headers map[string]string `json:"headers,omitempty"`
	// Dial, when set, is used instead of Command and URL: it returns a
	// fresh transport to the server each time the server is (re)started.
	// It is for embedders whose server runs in the same process (the SDK's
	// in-memory transports); the config file cannot set it.
	Dial func(ctx context.Context) (sdk.Transport, error) `json:"-"`
}

// validServer is what a server name may be: it is the first half of the
// session's tool names, which must also be valid function names.
var validServer = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// Validate checks one server entry; name is its key in "mcp_servers".
// The errors name the server.
func (c ServerConfig) Validate(name string) error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("mcp_servers.%s: "+format, append([]any{name}, args...)...))
	}
	if !validServer.MatchString(name) {
		add("the name must be 1 to 32 letters, digits, '_' or '-'")
	}
	switch n := countSet(len(c.Command) > 0, c.URL != "", c.Dial != nil); {
	case n == 0:
		add(`needs "command" (a program to start) or "url" (a streamable HTTP endpoint)`)
	case n > 1:
		add(`has both "command" and "url"; give one`)
	}
	if len(c.Command) > 0 && c.Command[0] == "" {
		add(`"command" starts with an empty program name`)
	}
	if c.URL != "" {
		if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add(`"url" %q is not an http:// or https:// URL`, c.URL)
		}
	}
	if len(c.Env) > 0 && len(c.Command) == 0 {
		add(`"env" applies to "command" servers only`)
	}
	if len(c.Headers) > 0 && c.URL == "" {
		add(`"headers" apply to "url" servers only`)
	}
	return errors.Join(errs...)
}

// ValidateAll checks every entry of servers, in name order.
func ValidateAll(servers map[string]ServerConfig) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		if err := servers[name].Validate(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func countSet(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
