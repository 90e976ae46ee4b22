package offload

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxName caps the length of a file or directory name made from an id.
const maxName = 100

// maxSuffix is how many "-N" names write tries for one call id.
const maxSuffix = 100

// write stores content in dir/<session>/<call>.txt, or <call>-N.txt when
// that exists, and returns the path.
func write(dir, session, call, content string) (string, error) {
	sdir := filepath.Join(dir, safeName(session, "session"))
	if err := os.MkdirAll(sdir, 0o700); err != nil {
		return "", err
	}
	base := safeName(call, "call")
	for i := 1; i <= maxSuffix; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		path := filepath.Join(sdir, name+".txt")
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.WriteString(content)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return "", err
		}
		return path, nil
	}
	return "", fmt.Errorf("%s: %d files for call %q exist already", sdir, maxSuffix, call)
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
