package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tack-run/tack/llm"
)

// Model names the Resolver knows.
const (
	// Prefix starts the name of every scripted model: "script:<path>".
	Prefix = "script:"
	// DemoModel names the built-in demo script (Demo).
	DemoModel = "script:demo"
	// InlineModel names an inline script given without a name.
	InlineModel = "script:inline"
)

// Resolver is the llm.Resolver of scripted models. Each Resolve returns a
// Model with a fresh Provider, at the first turn of its script.
type Resolver struct {
	dir string
}

// NewResolver returns a Resolver that reads script files inside dir
// only; with dir "" it reads none (the built-in demo and inline scripts
// remain).
func NewResolver(dir string) *Resolver {
	return &Resolver{dir: dir}
}

// errOutside is why a script path that is absolute or leaves the
// Resolver's directory resolves to nothing.
var errOutside = errors.New("script: a script path must be relative and stay inside the script directory")

// Resolve returns the scripted model for name, or for inline:
//
//   - a non-empty inline (not JSON null) is parsed as the script; the
//     model is called name, or InlineModel when name is "";
//   - DemoModel is the built-in Demo script;
//   - "script:<path>" loads the file at path inside the Resolver's
//     directory; it is read anew on each Resolve. An absolute path, one
//     that leaves the directory (by "..", or by a symbolic link that
//     points out of it), and any path when the Resolver has no
//     directory, resolve to nothing.
//
// Any other name, and a script that cannot be read or parsed, yields an
// *llm.UnknownModelError (matching llm.ErrUnknownModel) that says why. The
// reason never quotes a file's content: a file that is not a valid script
// is said to be so, no more (an inline script's errors are given in full,
// as the caller sent it).
func (r *Resolver) Resolve(name string, inline json.RawMessage) (*llm.Model, error) {
	if raw := bytes.TrimSpace(inline); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if name == "" {
			name = InlineModel
		}
		s, err := Parse(raw)
		return model(name, s, err)
	}
	path, ok := strings.CutPrefix(name, Prefix)
	if !ok {
		return nil, &llm.UnknownModelError{Name: name}
	}
	s, err := r.file(name, path)
	return model(name, s, err)
}

// file returns the script a "script:<path>" name stands for.
func (r *Resolver) file(name, path string) (*Script, error) {
	switch {
	case name == DemoModel:
		return Demo(), nil
	case path == "":
		return nil, errors.New("script: no path after " + Prefix)
	case r.dir == "":
		return nil, errors.New("script: this runtime reads no script files (it has no script directory)")
	case filepath.IsAbs(path) || !filepath.IsLocal(path):
		return nil, errOutside
	}
	// The file is opened through an os.Root: no component of path, a
	// symbolic link included, may lead out of the directory.
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return nil, fmt.Errorf("script: the script directory: %w", err)
	}
	defer root.Close()
	data, err := root.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("script: no file %s in the script directory: %w", path, fs.ErrNotExist)
	case err != nil && strings.Contains(err.Error(), "escapes"):
		return nil, errOutside
	case err != nil:
		return nil, fmt.Errorf("script: %s cannot be read", path)
	}
	s, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("script: %s is not a valid script (its errors are told for inline scripts only)", path)
	}
	return s, nil
}

// model returns the Model playing s, or the unknown-model error for err.
func model(name string, s *Script, err error) (*llm.Model, error) {
	if err != nil {
		return nil, &llm.UnknownModelError{Name: name, Err: err}
	}
	return &llm.Model{
		Name:          name,
		ID:            name,
		Provider:      New(s),
		ContextWindow: s.ContextWindow,
		ProvidesTools: []string{"sleep", "sleep_stubborn", "sleep_immune", "echo", "shell"},
	}, nil
}

// List offers the built-in demo script: other scripts are files, named by
// their path.
func (r *Resolver) List() []llm.Listing {
	return []llm.Listing{{Name: DemoModel, ContextWindow: Demo().ContextWindow}}
}
