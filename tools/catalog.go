package tools

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// maxCachedSets bounds the Sets a Catalog keeps; past it, Resolve still
// works but builds a fresh Set each time.
const maxCachedSets = 1024

// Catalog holds every tool the runtime can offer and resolves the tool names
// of create_session into Sets. Schemas are compiled once, by NewCatalog;
// resolved Sets are cached by their sorted names, so sessions asking for
// the same tools share one Set. It is safe for concurrent use.
type Catalog struct {
	all *Set

	mu    sync.Mutex
	cache map[string]*Set
}

// NewCatalog builds a Catalog of ts; it fails as [NewSet] does.
func NewCatalog(ts ...Tool) (*Catalog, error) {
	all, err := NewSet(ts...)
	if err != nil {
		return nil, err
	}
	return &Catalog{all: all, cache: make(map[string]*Set)}, nil
}

// All returns the Set of every tool in the catalog.
func (c *Catalog) All() *Set { return c.all }

// Resolve returns the Set of the named tools; order and repetitions in
// names do not matter, and no names give an empty Set. Names the catalog
// does not hold give an error wrapping [ErrUnknownTool] that lists them all,
// e.g. `unknown tool "grep"`.
func (c *Catalog) Resolve(names []string) (*Set, error) {
	sorted := slices.Compact(slices.Sorted(slices.Values(names)))
	key := strings.Join(sorted, "\x00")

	c.mu.Lock()
	s, ok := c.cache[key]
	c.mu.Unlock()
	if ok {
		return s, nil
	}

	s, missing := c.all.subset(sorted)
	if len(missing) > 0 {
		quoted := make([]string, len(missing))
		for i, n := range missing {
			quoted[i] = strconv.Quote(n)
		}
		return nil, fmt.Errorf("%w %s", ErrUnknownTool, strings.Join(quoted, ", "))
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if cached, ok := c.cache[key]; ok {
		return cached, nil
	}
	if len(c.cache) < maxCachedSets {
		c.cache[key] = s
	}
	return s, nil
}
