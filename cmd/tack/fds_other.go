//go:build !linux

package main

// closeOnExec does nothing here: os/exec passes children only what it
// is given on the systems tack runs sandboxed commands on.
func closeOnExec() {}
