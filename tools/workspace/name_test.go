package workspace

import (
	"strings"
	"testing"
)

// TestNameKeepsCase: where the file system ignores case, sessions whose
// ids differ only in case get directories whose names differ in more than
// case, so they never share one (nor does a new session's clearing of its
// directory empty another's); elsewhere the name is the id.
func TestNameKeepsCase(t *testing.T) {
	defer func(was bool) { foldsCase = was }(foldsCase)
	for _, folds := range []bool{false, true} {
		foldsCase = folds
		names := map[string]string{}
		for _, id := range []string{"proj", "Proj", "PROJ", "pRoj", "a-b.c", "Proj/sub-1"} {
			n, err := name(id)
			if err != nil {
				t.Fatal(err)
			}
			root, _, _ := strings.Cut(id, "/")
			if !folds && n != root {
				t.Errorf("name(%q) = %q where case counts, want %q", id, n, root)
			}
			if other, ok := names[strings.ToLower(n)]; folds && ok && other != root {
				t.Errorf("foldsCase %v: %q and %q share the directory %q", folds, other, root, n)
			}
			names[strings.ToLower(n)] = root
		}
		if folds && len(names) != 5 {
			t.Errorf("foldsCase: %d directories for 5 root sessions: %v", len(names), names)
		}
	}
	if _, err := name("a^b"); err == nil {
		t.Error("an id with the escape '^' named a directory")
	}
}
