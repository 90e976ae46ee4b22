package script

import (
	"bytes"
	"encoding/json"
	"errors"
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

// NewResolver returns a Resolver that reads relative script paths against
// dir ("" is the working directory).
func NewResolver(dir string) *Resolver {
	return &Resolver{dir: dir}
}

// Resolve returns the scripted model for name, or for inline:
//
//   - a non-empty inline (not JSON null) is parsed as the script; the
//     model is called name, or InlineModel when name is "";
//   - DemoModel is the built-in Demo script;
//   - "script:<path>" loads the file at path, relative to the Resolver's
//     directory unless absolute; it is read anew on each Resolve.
//
// Any other name, and a script that cannot be read or parsed, yields an
// *llm.UnknownModelError (matching llm.ErrUnknownModel) that says why.
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
	case !filepath.IsAbs(path):
		path = filepath.Join(r.dir, path)
	}
	return Load(path)
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
