package migrate

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one schema step.
type Migration struct {
	// Version orders migrations and is what schema_migrations records.
	Version int
	// Name is the file name without version and extension.
	Name string
	// SQL is the script, run as one transaction.
	SQL string
}

// Load reads the *.sql files of dir in fsys, sorted by version. A file
// whose name does not start with a positive version, or a version used
// twice, is an error.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	var ms []Migration
	seen := map[int]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		m, err := parse(e.Name())
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[m.Version]; dup {
			return nil, fmt.Errorf("migrate: version %d used by %s and %s", m.Version, prev, e.Name())
		}
		seen[m.Version] = e.Name()
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		m.SQL = string(b)
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

func parse(file string) (Migration, error) {
	base := strings.TrimSuffix(file, ".sql")
	num, name, _ := strings.Cut(base, "_")
	v, err := strconv.Atoi(num)
	if err != nil || v <= 0 {
		return Migration{}, fmt.Errorf("migrate: %s: name must be NNNN_name.sql with NNNN > 0", file)
	}
	return Migration{Version: v, Name: name}, nil
}

// Pending returns the migrations of ms whose versions are not in applied,
// in order. It fails when applied holds a version newer than every one in
// ms: the database was migrated by a newer binary, and this one must not
// write to it.
func Pending(ms []Migration, applied []int) ([]Migration, error) {
	done := make(map[int]bool, len(applied))
	newest := 0
	for _, v := range applied {
		done[v] = true
		newest = max(newest, v)
	}
	if len(ms) > 0 && newest > ms[len(ms)-1].Version {
		return nil, fmt.Errorf("migrate: the database schema is at version %d, newer than this binary's %d; upgrade tack",
			newest, ms[len(ms)-1].Version)
	}
	var out []Migration
	for _, m := range ms {
		if !done[m.Version] {
			out = append(out, m)
		}
	}
	return out, nil
}
