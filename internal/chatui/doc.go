// Package chatui renders what `tack chat` shows a person: the status line
// (state, running tool, context and session tokens) and one line of output
// per event worth seeing. It only formats; the command owns the terminal.
//
// # Usage
//
//	var st chatui.Status
//	st.Update(ev)                       // for every event
//	prompt := st.Render(color) + " › "  // the input line's prompt
//	text := chatui.Describe(ev, color)  // what to print, "" for nothing
//
// # Concurrency
//
// A Status is used from one goroutine.
//
// # Testing
//
// Everything is a pure function of events, tested with table tests.
package chatui
