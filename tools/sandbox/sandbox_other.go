//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"os/exec"
)

// Owner returns -1, -1: there is no sandbox user here.
func Owner() (uid, gid int) { return -1, -1 }

// Available says that there is no sandbox here: it needs Linux.
func Available() error {
	return errors.New("sandbox unavailable: the sandbox needs Linux (namespaces and Landlock)")
}

// Main does nothing: there is no helper here.
func Main() {}

func command1(context.Context, string, plan, []string) (*exec.Cmd, func(), error) {
	return nil, nil, Available()
}
