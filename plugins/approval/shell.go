package approval

import "strings"

// operators are the pieces of shell syntax that chain, substitute or
// redirect commands; a command holding any of them is never safe and its
// family is the whole command.
var operators = []string{";", "&", "|", "`", "$(", "<", ">", "\n", "\r"}

// compound reports whether cmd holds a shell operator.
func compound(cmd string) bool {
	for _, op := range operators {
		if strings.Contains(cmd, op) {
			return true
		}
	}
	return false
}

// family is the command family an "always" approval of cmd records: the
// first word after leading VAR=value assignments, or the whole trimmed
// command when it is compound or holds nothing but assignments.
func family(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if compound(cmd) {
		return cmd
	}
	for _, w := range strings.Fields(cmd) {
		if !isAssignment(w) {
			return w
		}
	}
	return cmd
}

// isAssignment reports whether w is a shell variable assignment, NAME=...
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		letter := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// hasPrefix reports whether words starts with prefix, word for word.
func hasPrefix(words, prefix []string) bool {
	if len(prefix) == 0 || len(words) < len(prefix) {
		return false
	}
	for i, w := range prefix {
		if words[i] != w {
			return false
		}
	}
	return true
}
