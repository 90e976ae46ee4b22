package main

import (
	"math"

	"golang.org/x/sys/unix"
)

// closeOnExec marks the descriptors tack inherited above stderr
// close-on-exec (whatever started it may have left some open: a
// terminal's `3<>/dev/tty`, a supervisor's pipe), so that no command it
// starts — the shell with --sandbox off, an MCP server — gets them. The
// sandbox's helper closes them too.
func closeOnExec() { _ = unix.CloseRange(3, math.MaxUint, unix.CLOSE_RANGE_CLOEXEC) }
