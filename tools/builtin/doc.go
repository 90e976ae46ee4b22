// Package builtin holds the tools Tack ships: the demo tools of
// docs/protocol.md#demo-tools (sleep, sleep_stubborn, sleep_immune, echo,
// shell), the opt-in file tools (read_file, write_file, list_files) confined to a root
// directory, and todo_write (TodoWrite), whose calls the session turns
// into its todo list.
//
// # Usage
//
//	cat, err := tools.NewCatalog(append(builtin.Demo(), builtin.Files("/srv/work")...)...)
//
// [Demo] gives the five demo tools with the shell in the process's working
// directory; [Shell] with [WithDir] or [WithMaxOutput] makes a configured
// shell.
// Every tool has a JSON Schema with additionalProperties false, so
// tools.Set.Validate catches misspelt arguments before Run.
//
// # Concurrency
//
// The tools hold no mutable state and may run concurrently. shell calls
// update from an os/exec copying goroutine, never after Run returns.
// sleep_stubborn ignores its context on purpose: the runtime must abandon
// it, and its goroutine ends when the sleep does.
//
// # Testing
//
// The sleep tools use the time package only, so tests run them inside a
// testing/synctest bubble and take no real time. The shell tests start real
// processes and check through /proc (Linux) that cancellation leaves no
// member of the command's process group behind; the file tool tests work in
// t.TempDir.
package builtin
