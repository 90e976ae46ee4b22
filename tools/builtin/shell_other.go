//go:build !unix

package builtin

import "os/exec"

// killGroupOnCancel keeps os/exec's default, killing the shell only: process
// groups are a Unix notion.
func killGroupOnCancel(*exec.Cmd) {}
