package open_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/store/open"
	"github.com/tack-run/tack/store/postgres"
	"github.com/tack-run/tack/store/postgres/pgtest"
	"github.com/tack-run/tack/store/sqlite"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "xdg"))
	tests := []struct {
		name     string
		spec     func(t *testing.T) string
		want     store.Store
		wantPath string
		wantErr  error
	}{
		{name: "memory", spec: lit("memory"), want: &memory.Store{}},
		{name: "sqlite path", spec: lit("sqlite:" + filepath.Join(dir, "a.db")), want: &sqlite.Store{}, wantPath: filepath.Join(dir, "a.db")},
		{name: "sqlite default", spec: lit("sqlite:"), want: &sqlite.Store{}, wantPath: filepath.Join(dir, "xdg", "tack", "tack.db")},
		{name: "sqlite bare", spec: lit("sqlite"), want: &sqlite.Store{}, wantPath: filepath.Join(dir, "xdg", "tack", "tack.db")},
		{name: "postgres", spec: func(t *testing.T) string { return pgtest.DSN(t) }, want: &postgres.Store{}},
		{name: "unknown", spec: lit("mysql://u:secret@h/db"), wantErr: store.ErrInvalid},
		{name: "empty", spec: lit(""), wantErr: store.ErrInvalid},
		{name: "bare path", spec: lit("/tmp/tack.db"), wantErr: store.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := open.Open(t.Context(), tc.spec(t))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if reflect.TypeOf(st) != reflect.TypeOf(tc.want) {
				t.Fatalf("Open returned a %T, want %T", st, tc.want)
			}
			if s, ok := st.(*sqlite.Store); ok && s.Path() != tc.wantPath {
				t.Fatalf("path %s, want %s", s.Path(), tc.wantPath)
			}
			if err := st.Create(t.Context(), tc.name, store.Config{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func lit(s string) func(*testing.T) string { return func(*testing.T) string { return s } }

func TestOpenRedactsPasswords(t *testing.T) {
	_, err := open.Open(t.Context(), "mysql://user:hunter2@db/x")
	if err == nil || contains(err.Error(), "hunter2") {
		t.Fatalf("error %v leaks the password", err)
	}
}

func TestDefaultSQLitePath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	tests := []struct {
		name, xdg, want string
	}{
		{"XDG_DATA_HOME", filepath.Join(home, "data"), filepath.Join(home, "data", "tack", "tack.db")},
		{"unset", "", filepath.Join(home, ".local", "share", "tack", "tack.db")},
		{"relative is ignored", "rel/data", filepath.Join(home, ".local", "share", "tack", "tack.db")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_DATA_HOME", tc.xdg)
			got, err := open.DefaultSQLitePath()
			if err != nil || got != tc.want {
				t.Fatalf("DefaultSQLitePath() = %q, %v; want %q", got, err, tc.want)
			}
			if fi, err := os.Stat(filepath.Dir(got)); err != nil || !fi.IsDir() {
				t.Fatalf("directory not created: %v", err)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
