package offload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tack-run/tack/plugins"
	"github.com/tack-run/tack/tools"
)

// maxName caps the length of a file or directory name made from an id.
const maxName = 100

// maxSuffix is how many "-N" names write tries for one call id.
const maxSuffix = 100

// write stores content in dir/<session>/<call>.txt inside root, or
// <call>-N.txt when that exists, and returns its path in root; the
// directories it makes and the file are given to uid and gid unless they
// are -1. Everything goes through root: a link that leads out of it (one
// a session's shell made in its workspace) fails the write.
func write(root *os.Root, dir, session, call, content string, uid, gid int) (string, error) {
	sdir := filepath.Join(dir, safeName(session, "session"))
	if err := mkdirs(root, sdir, uid, gid); err != nil {
		return "", err
	}
	base := safeName(call, "call")
	for i := 1; i <= maxSuffix; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		path := filepath.Join(sdir, name+".txt")
		f, err := root.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.WriteString(content)
		if err == nil && uid >= 0 {
			err = f.Chown(uid, gid)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			root.Remove(path)
			return "", err
		}
		return path, nil
	}
	return "", fmt.Errorf("%s: %d files for call %q exist already", sdir, maxSuffix, call)
}

// mkdirs makes dir in root and the directories above it that do not
// exist, mode 0700, giving each it makes to uid and gid unless they are
// -1.
func mkdirs(root *os.Root, dir string, uid, gid int) error {
	if dir == "." {
		return nil
	}
	if _, err := root.Stat(dir); err == nil {
		return nil
	}
	if err := mkdirs(root, filepath.Dir(dir), uid, gid); err != nil {
		return err
	}
	if err := root.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if uid >= 0 {
		return root.Lchown(dir, uid, gid)
	}
	return nil
}

// safeName makes id usable as one path element: letters, digits, '.', '_'
// and '-' are kept, anything else becomes '_'; an id that is empty, "." or
// ".." becomes fallback.
func safeName(id, fallback string) string {
	var b strings.Builder
	for _, r := range id {
		if b.Len() >= maxName {
			break
		}
		if r == '.' || r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if s := b.String(); s != "" && s != "." && s != ".." {
		return s
	}
	return fallback
}

// tempDir is where results go in a runtime whose tools have no workspace.
var tempDir = filepath.Join(os.TempDir(), "tack-offload")

// workspaceDir is where results go in the session's workspace.
var workspaceDir = filepath.Join(".tack", "offload")

// offload writes the result content of ev's call under the session's
// workspace (workspaceDir/<session>/<call>.txt), or, without one, under
// tempDir, and returns where the model finds it: relative to the
// workspace, where its file tools and shell work, or absolute. No one
// but the runtime chooses the directory: a directory a session's
// configuration named was one a user's session could fill anywhere the
// server may write, another user's workspace among it.
func offload(ev *plugins.Event, content string) (string, error) {
	base, dir, uid, gid := tempDir, ".", -1, -1
	if ev.Workspace != nil {
		var err error
		if base, err = ev.Workspace.Dir(tools.WithSession(context.Background(), ev.Session)); err != nil {
			return "", err
		}
		dir = workspaceDir
		uid, gid = ev.Workspace.Owner()
	} else if err := os.MkdirAll(tempDir, 0o700); err != nil {
		return "", err
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		return "", err
	}
	defer root.Close()
	path, err := write(root, dir, ev.Session, ev.Call.GetId(), content, uid, gid)
	if err != nil || ev.Workspace != nil {
		return path, err
	}
	return filepath.Join(base, path), nil
}
