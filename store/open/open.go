package open

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/store/postgres"
	"github.com/tack-run/tack/store/sqlite"
)

// Open returns the store that spec names: "memory", "sqlite:PATH" or a
// postgres:// (postgresql://) DSN. A relative PATH is relative to the
// working directory; an empty one means DefaultSQLitePath.
func Open(ctx context.Context, spec string, opts ...store.Option) (store.Store, error) {
	switch {
	case spec == "memory":
		return memory.New(opts...), nil
	case spec == "sqlite" || strings.HasPrefix(spec, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(spec, "sqlite"), ":")
		if path == "" {
			var err error
			if path, err = DefaultSQLitePath(); err != nil {
				return nil, err
			}
		}
		return sqlite.Open(ctx, path, opts...)
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return postgres.Open(ctx, spec, opts...)
	}
	return nil, fmt.Errorf("%w: --store %q: want memory, sqlite:PATH or postgres://...", store.ErrInvalid, redact(spec))
}

// DefaultSQLitePath is where serve and chat keep their database:
// $XDG_DATA_HOME/tack/tack.db, or ~/.local/share/tack/tack.db when
// XDG_DATA_HOME is unset or not absolute. It creates the directory.
func DefaultSQLitePath() (string, error) {
	base := os.Getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(base) { // the XDG spec: relative values are invalid
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("store: no XDG_DATA_HOME and no home directory: %w", err)
		}
		base = filepath.Join(home, ".local", "share")
	}
	dir := filepath.Join(base, "tack")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("store: %w", err)
	}
	return filepath.Join(dir, "tack.db"), nil
}

// redact hides a password an unrecognised spec might carry.
func redact(spec string) string {
	if at := strings.LastIndex(spec, "@"); at >= 0 {
		if i := strings.Index(spec, "://"); i >= 0 && i < at {
			return spec[:i+3] + "…" + spec[at:]
		}
	}
	return spec
}
