package approval

import "strings"

// operators are the characters that make a command not plain wherever
// they stand: they chain, group, substitute, expand or redirect commands,
// or quote and escape, so that sh's words are no longer what a split on
// blanks shows. A line break is refused with every other control
// character.
const operators = ";&|<>(){}$`\\'\""

// nameSpecial are the characters that keep a command's name (its first
// word after assignments) from being a literal name: pathname patterns,
// tilde expansion, a comment and negation. In later words they only make
// arguments, which a command could have been given as they are.
const nameSpecial = "*?[]~#!"

// split splits cmd into words the way sh splits a plain command: on spaces
// and tabs only. plain is false, and words nil, when cmd holds anything
// else sh treats specially or that a split on Unicode spaces would read
// differently: an operator, a quote or backslash, a control character
// other than tab (line breaks included), DEL, or any byte outside ASCII
// (U+00A0, U+0085, U+2028, zero-width and direction marks, ...). sh runs
// "ls\v/../../bin/sh" as one word, a path, not as "ls".
func split(cmd string) (words []string, plain bool) {
	for i := 0; i < len(cmd); i++ {
		b := cmd[i]
		switch {
		case b == ' ' || b == '\t':
		case b < 0x20 || b >= 0x7f:
			return nil, false
		case strings.IndexByte(operators, b) >= 0:
			return nil, false
		}
	}
	return strings.FieldsFunc(cmd, func(r rune) bool { return r == ' ' || r == '\t' }), true
}

// family is the command family an "always" approval of cmd records: the
// command's name, its first word, when cmd is plain and that name is
// literal; otherwise the whole command with spaces and tabs trimmed, so
// that "always" covers only that exact command. A leading VAR=value
// assignment makes it the whole command too: LD_PRELOAD, PATH and the
// like change what any command runs, so "always" on ls must not cover
// LD_PRELOAD=./x.so ls.
func family(cmd string) string {
	whole := strings.Trim(cmd, " \t")
	words, plain := split(cmd)
	if !plain || len(words) == 0 || isAssignment(words[0]) || strings.ContainsAny(words[0], nameSpecial) {
		return whole
	}
	return words[0]
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
