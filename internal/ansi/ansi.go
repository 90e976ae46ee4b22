// Package ansi holds the terminal styles Tack's command-line views use,
// one function to apply them, and Printable, which keeps the text those
// views show from steering the terminal.
//
// # Usage
//
//	fmt.Println(ansi.Paint(color, ansi.Green, "done"))
//
// # Concurrency
//
// Constants and pure functions: safe anywhere.
//
// # Testing
//
// Printable has table tests; the styles are tested through the views that
// use them (internal/timeline, internal/chatui).
package ansi

import "strings"

// ANSI escape sequences.
const (
	Reset  = "\x1b[0m"
	Bold   = "\x1b[1m"
	Dim    = "\x1b[2m"
	Red    = "\x1b[31m"
	Green  = "\x1b[32m"
	Yellow = "\x1b[33m"
	Blue   = "\x1b[34m"
	Purple = "\x1b[35m"
	Cyan   = "\x1b[36m"
)

// Paint wraps s in style when color is on, and returns s as it is otherwise.
func Paint(color bool, style, s string) string {
	if !color {
		return s
	}
	return style + s + Reset
}

// Strip removes the escape sequences of this package from s.
func Strip(s string) string {
	return stripper.Replace(s)
}

var stripper = strings.NewReplacer(Reset, "", Bold, "", Dim, "", Red, "", Green, "", Yellow, "", Blue, "", Purple, "", Cyan, "")
