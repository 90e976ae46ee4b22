package tools

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrUnknownTool is wrapped by the errors for tool names that a Set or a
// Catalog does not hold.
var ErrUnknownTool = errors.New("unknown tool")

// noArgsSchema is the schema given to a tool whose Spec has none.
const noArgsSchema = `{"type":"object","properties":{},"additionalProperties":false}`

// Set is an immutable set of tools whose argument schemas are compiled once,
// when the Set is built. Sessions share Sets; a nil *Set reads as empty.
type Set struct {
	byName map[string]*entry
	specs  []Spec // sorted by name
}

// entry is one tool of a Set with its compiled schema.
type entry struct {
	tool   Tool
	spec   Spec
	schema *jsonschema.Schema
	plain  *plainSchema // nil when the schema asks for more
}

// NewSet builds a Set of ts. It fails on a nil tool, a name that is empty
// or not [ValidName] (what providers accept, and "<server>/<tool>" for
// MCP tools), a duplicate name, or a schema that does not compile or does not
// describe an object. A Spec without a Schema gets one that takes no
// arguments.
func NewSet(ts ...Tool) (*Set, error) {
	return (*Set)(nil).With(ts...)
}

// With returns a new Set holding the tools of s and ts; s is unchanged and
// the schemas of its tools are not compiled again. A name already in s is
// an error.
func (s *Set) With(ts ...Tool) (*Set, error) {
	entries := make([]*entry, 0, s.Len()+len(ts))
	if s != nil {
		for _, sp := range s.specs {
			entries = append(entries, s.byName[sp.Name])
		}
	}
	seen := make(map[string]bool, cap(entries))
	for _, e := range entries {
		seen[e.spec.Name] = true
	}
	for i, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("tools: tool %d is nil", i)
		}
		e, err := newEntry(t)
		if err != nil {
			return nil, err
		}
		if seen[e.spec.Name] {
			return nil, fmt.Errorf("tools: duplicate tool name %q", e.spec.Name)
		}
		seen[e.spec.Name] = true
		entries = append(entries, e)
	}
	return setOf(entries), nil
}

// setOf builds a Set from entries with distinct names.
func setOf(entries []*entry) *Set {
	s := &Set{byName: make(map[string]*entry, len(entries)), specs: make([]Spec, 0, len(entries))}
	for _, e := range entries {
		s.byName[e.spec.Name] = e
		s.specs = append(s.specs, e.spec)
	}
	slices.SortFunc(s.specs, func(a, b Spec) int { return cmp.Compare(a.Name, b.Name) })
	return s
}

// newEntry is t's entry: the one a tool that embeds Compiled keeps (as
// one made with Define does), else one compiled now.
func newEntry(t Tool) (*entry, error) {
	if c, ok := t.(compiler); ok {
		return c.compiled(t)
	}
	return compile(t)
}

// compile checks t's name and compiles its schema into an entry, which
// no one changes once made: Sets share the entries of tools that embed
// Compiled.
func compile(t Tool) (*entry, error) {
	spec := t.Spec()
	if spec.Name == "" {
		return nil, errors.New("tools: tool with an empty name")
	}
	if !ValidName(spec.Name) {
		return nil, fmt.Errorf("tools: tool name %q: want 1 to 64 letters, digits, '_' or '-' (and at most one '/', which counts as two)", spec.Name)
	}
	if len(bytes.TrimSpace(spec.Schema)) == 0 {
		spec.Schema = []byte(noArgsSchema)
	} else {
		spec.Schema = bytes.Clone(spec.Schema)
	}
	sch, pl, err := compileSchema(spec.Name, spec.Schema)
	if err != nil {
		return nil, fmt.Errorf("tools: schema of tool %q: %w", spec.Name, err)
	}
	return &entry{tool: t, spec: spec, schema: sch, plain: pl}, nil
}

// Get returns the tool called name.
func (s *Set) Get(name string) (Tool, bool) {
	if s == nil {
		return nil, false
	}
	e, ok := s.byName[name]
	if !ok {
		return nil, false
	}
	return e.tool, true
}

// Spec returns the spec of the tool called name as it was when the Set was
// built (with the default schema filled in). Its Kind tells whether the
// tool is Immune. The Schema bytes are shared: do not modify them.
func (s *Set) Spec(name string) (Spec, bool) {
	if s == nil {
		return Spec{}, false
	}
	e, ok := s.byName[name]
	if !ok {
		return Spec{}, false
	}
	return e.spec, true
}

// Len returns the number of tools in s.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.specs)
}

// Names returns the tool names, sorted.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	names := make([]string, len(s.specs))
	for i, sp := range s.specs {
		names[i] = sp.Name
	}
	return names
}

// Specs returns the specs sorted by name: what a model request lists as
// its tools. The slice is the caller's; the Schema bytes are shared and
// must not be modified.
func (s *Set) Specs() []Spec {
	if s == nil {
		return nil
	}
	return slices.Clone(s.specs)
}

// subset returns the Set of the named tools of s, reusing their compiled
// schemas, and the names s does not hold.
func (s *Set) subset(names []string) (*Set, []string) {
	var missing []string
	entries := make([]*entry, 0, len(names))
	for _, n := range names {
		e, ok := s.byName[n]
		if !ok {
			missing = append(missing, n)
			continue
		}
		entries = append(entries, e)
	}
	return setOf(entries), missing
}
