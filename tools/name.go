package tools

import (
	"regexp"
	"strings"
)

// MaxNameLen is the longest function name OpenAI-compatible providers
// accept; it bounds a tool's name as sent (see [WireName]).
const MaxNameLen = 64

// namePattern is a provider's function name, or two joined by one '/'
// (an MCP server's tool, "<server>/<tool>"), or one after "a2a:" (a
// remote A2A agent, "a2a:<name>").
var namePattern = regexp.MustCompile(`^([A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)?|a2a:[A-Za-z0-9_-]+)$`)

// ValidName reports whether name can name a tool: letters, digits, '_'
// and '-', with at most one '/' between two such parts or after "a2a:",
// and at most MaxNameLen bytes once written as [WireName] writes it.
func ValidName(name string) bool {
	return namePattern.MatchString(name) && len(WireName(name)) <= MaxNameLen
}

// WireName is a tool's name as a provider gets it: providers' function
// names cannot hold '/' or ':', so "fs/read_file" is sent as
// "fs__read_file" and "a2a:remote" as "a2a__remote". Other names are
// sent as they are. A provider maps the names of the calls it receives
// back with the request's tools (see llm/openai).
func WireName(name string) string {
	if rest, ok := strings.CutPrefix(name, "a2a:"); ok {
		return "a2a__" + rest
	}
	return strings.Replace(name, "/", "__", 1)
}
