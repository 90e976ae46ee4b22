package approval_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/plugins/approval"
)

// TestPlainCommand checks that a command is safe only when sh would split
// it into the words the plugin sees, and that the family of any other
// command is the whole command. strings.Fields splits on \v, \f, U+0085,
// U+00A0 and other Unicode spaces; sh splits on spaces and tabs only, so
// "ls\v/../../bin/sh evil.sh" runs the path "ls\v/../../bin/sh" (/bin/sh,
// once a directory "ls\v" exists), not ls.
func TestPlainCommand(t *testing.T) {
	p := mustNew(t, `{"safe_commands": ["ls", "wc -l"]}`)
	tests := []struct {
		name string
		cmd  string
		hint string // "": the command runs without approval
		fam  string
	}{
		{name: "plain", cmd: "ls -la"},
		{name: "tab separates words", cmd: "ls\t-la"},
		{name: "spaces around", cmd: " \tls  -la \t"},
		{name: "two-word safe command", cmd: "wc -l a.txt"},
		{name: "pattern in an argument", cmd: "ls *.go"},
		{name: "two-word safe command split by a vertical tab", cmd: "wc\v-l a.txt",
			hint: `shell: wc\v-l a.txt`, fam: "wc\v-l a.txt"},

		{name: "vertical tab", cmd: "ls\v/../../bin/sh evil.sh",
			hint: `shell: ls\v/../../bin/sh evil.sh`, fam: "ls\v/../../bin/sh evil.sh"},
		{name: "form feed", cmd: "ls\f/../../bin/sh evil.sh",
			hint: `shell: ls\f/../../bin/sh evil.sh`, fam: "ls\f/../../bin/sh evil.sh"},
		{name: "next line U+0085", cmd: "ls\u0085/../../bin/sh evil.sh",
			hint: `shell: ls\u0085/../../bin/sh evil.sh`, fam: "ls\u0085/../../bin/sh evil.sh"},
		{name: "no-break space U+00A0", cmd: "ls\u00a0/../../bin/sh evil.sh",
			hint: `shell: ls\u00a0/../../bin/sh evil.sh`, fam: "ls\u00a0/../../bin/sh evil.sh"},
		{name: "line separator U+2028", cmd: "ls\u2028/../../bin/sh evil.sh",
			hint: `shell: ls\u2028/../../bin/sh evil.sh`, fam: "ls\u2028/../../bin/sh evil.sh"},
		{name: "ideographic space U+3000", cmd: "ls\u3000x", hint: `shell: ls\u3000x`, fam: "ls\u3000x"},
		{name: "zero-width space", cmd: "ls\u200b -la", hint: `shell: ls\u200b -la`, fam: "ls\u200b -la"},
		{name: "right-to-left override", cmd: "ls \u202eal-", hint: `shell: ls \u202eal-`, fam: "ls \u202eal-"},
		{name: "leading no-break space", cmd: "\u00a0ls -la", hint: `shell: \u00a0ls -la`, fam: "\u00a0ls -la"},
		{name: "non-ASCII letter", cmd: "ls café", hint: "shell: ls café", fam: "ls café"},
		{name: "carriage return", cmd: "ls\r", hint: `shell: ls\r`, fam: "ls\r"},
		{name: "NUL", cmd: "ls\x00x", hint: `shell: ls\x00x`, fam: "ls\x00x"},
		{name: "escape", cmd: "ls \x1b[2Jx", hint: `shell: ls \x1b[2Jx`, fam: "ls \x1b[2Jx"},
		{name: "DEL", cmd: "ls\x7f", hint: `shell: ls\x7f`, fam: "ls\x7f"},
		{name: "trailing newline", cmd: "ls\n", hint: `shell: ls\n`, fam: "ls\n"},
		{name: "newline", cmd: "ls\nsh evil.sh", hint: `shell: ls\nsh evil.sh`, fam: "ls\nsh evil.sh"},

		{name: "absolute path", cmd: "/bin/sh evil.sh", hint: "shell: /bin/sh evil.sh", fam: "/bin/sh"},
		{name: "relative path", cmd: "./ls", hint: "shell: ./ls", fam: "./ls"},
		{name: "path through a safe name", cmd: "ls/../../bin/sh evil.sh",
			hint: "shell: ls/../../bin/sh evil.sh", fam: "ls/../../bin/sh"},

		{name: "variable", cmd: "ls $HOME", hint: "shell: ls $HOME", fam: "ls $HOME"},
		{name: "braced variable", cmd: "ls${IFS}x", hint: "shell: ls${IFS}x", fam: "ls${IFS}x"},
		{name: "single quotes", cmd: "ls 'a b'", hint: "shell: ls 'a b'", fam: "ls 'a b'"},
		{name: "double quotes", cmd: `ls "a b"`, hint: `shell: ls "a b"`, fam: `ls "a b"`},
		{name: "quoted name", cmd: `l"s" -la`, hint: `shell: l"s" -la`, fam: `l"s" -la`},
		{name: "backslash", cmd: `ls\ x`, hint: `shell: ls\ x`, fam: `ls\ x`},
		{name: "parentheses", cmd: "(ls)", hint: "shell: (ls)", fam: "(ls)"},
		{name: "braces", cmd: "{ ls; }", hint: "shell: { ls; }", fam: "{ ls; }"},
		{name: "brace in an argument", cmd: "ls {a,b}", hint: "shell: ls {a,b}", fam: "ls {a,b}"},
		{name: "semicolon", cmd: "ls; sh evil.sh", hint: "shell: ls; sh evil.sh", fam: "ls; sh evil.sh"},
		{name: "pipe", cmd: "ls | sh", hint: "shell: ls | sh", fam: "ls | sh"},
		{name: "redirection", cmd: "ls >x", hint: "shell: ls >x", fam: "ls >x"},
		{name: "backticks", cmd: "ls `sh evil.sh`", hint: "shell: ls `sh evil.sh`", fam: "ls `sh evil.sh`"},

		{name: "pattern as the name", cmd: "l? -la", hint: "shell: l? -la", fam: "l? -la"},
		{name: "bracket pattern as the name", cmd: "[l]s", hint: "shell: [l]s", fam: "[l]s"},
		{name: "star as the name", cmd: "* x", hint: "shell: * x", fam: "* x"},
		{name: "tilde as the name", cmd: "~x y", hint: "shell: ~x y", fam: "~x y"},
		{name: "negation", cmd: "! rm -rf x", hint: "shell: ! rm -rf x", fam: "! rm -rf x"},
		{name: "comment", cmd: "#ls x", hint: "shell: #ls x", fam: "#ls x"},
		{name: "assignment, then a plain name", cmd: "FOO=1 ls", hint: "shell: FOO=1 ls", fam: "FOO=1 ls"},
		{name: "assignment, then a pattern", cmd: "FOO=1 l?", hint: "shell: FOO=1 l?", fam: "FOO=1 l?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.Handle(shell(tt.cmd))
			want := hold(tt.hint, tt.fam)
			if tt.hint == "" {
				want = nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Handle(%q) = %+v, want %+v", tt.cmd, got, want)
			}
		})
	}
}

// TestSafeCommandsConfig checks that a safe command must be plain words,
// its first word a command's name.
func TestSafeCommandsConfig(t *testing.T) {
	tests := []struct {
		safe    string
		wantErr string // "": accepted
	}{
		{safe: "ls"},
		{safe: "wc -l"},
		{safe: "ls\t-la"},
		{safe: "ls\v-la", wantErr: "has a shell operator"},
		{safe: "ls\u00a0-la", wantErr: "has a shell operator"},
		{safe: "\u0085ls", wantErr: "has a shell operator"},
		{safe: "\v", wantErr: "has a shell operator"},
		{safe: "ls\n", wantErr: "has a shell operator"},
		{safe: "ls $HOME", wantErr: "has a shell operator"},
		{safe: "ls 'a'", wantErr: "has a shell operator"},
		{safe: `ls\ a`, wantErr: "has a shell operator"},
		{safe: "./ls", wantErr: "is a path"},
		{safe: "/bin/ls", wantErr: "is a path"},
		{safe: "FOO=1 ls", wantErr: "starts with a variable assignment"},
		{safe: "l?", wantErr: "has one of"},
		{safe: "ls *", wantErr: "has one of"},
		{safe: "!", wantErr: "has one of"},
		{safe: "~x", wantErr: "has one of"},
	}
	for _, tt := range tests {
		t.Run(tt.safe, func(t *testing.T) {
			config := `{"safe_commands": [` + quote(tt.safe) + `]}`
			_, err := newPlugin(config)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("New(%s): %v", config, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("New(%s) = %v, want an error containing %q", config, err, tt.wantErr)
			}
		})
	}
}

// TestHintShowsWhatRuns checks that the hint a person approves shows
// characters sh reads as part of a word, not a space in their place.
func TestHintShowsWhatRuns(t *testing.T) {
	p := mustNew(t, "")
	got := p.Handle(shell("cat\u00a0/../../bin/sh\vevil.sh"))
	if len(got) != 1 || got[0].Hint != `shell: cat\u00a0/../../bin/sh\vevil.sh` {
		t.Errorf("Handle = %+v, want the hint with \\u00a0 and \\v", got)
	}
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// newPlugin builds a plugin from config.
func newPlugin(config string) (plugins.Plugin, error) {
	return approval.New(json.RawMessage(config))
}
