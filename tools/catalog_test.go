package tools_test

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/tack-run/tack/tools"
)

func TestCatalogResolve(t *testing.T) {
	cat, err := tools.NewCatalog(fake("echo", ""), fake("sleep", sleepSchema), fake("shell", shellSchema))
	if err != nil {
		t.Fatalf("NewCatalog: %v", err)
	}
	tests := []struct {
		name    string
		names   []string
		want    []string
		wantErr string
	}{
		{name: "subset", names: []string{"sleep", "echo"}, want: []string{"echo", "sleep"}},
		{name: "repeats collapse", names: []string{"echo", "echo"}, want: []string{"echo"}},
		{name: "none", names: nil, want: nil},
		{name: "unknown name", names: []string{"echo", "grep"}, wantErr: `unknown tool "grep"`},
		{name: "all unknown names listed", names: []string{"zz", "grep", "echo"}, wantErr: `unknown tool "grep", "zz"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := cat.Resolve(tt.names)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, tools.ErrUnknownTool) {
					t.Fatalf("Resolve = %v, want %q wrapping ErrUnknownTool", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if got := set.Names(); !slices.Equal(got, tt.want) {
				t.Errorf("Names = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCatalogSharesSets(t *testing.T) {
	cat, err := tools.NewCatalog(fake("echo", ""), fake("sleep", sleepSchema))
	if err != nil {
		t.Fatalf("NewCatalog: %v", err)
	}
	first, err := cat.Resolve([]string{"sleep", "echo"})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			s, err := cat.Resolve([]string{"echo", "sleep"})
			if err != nil || s != first {
				t.Errorf("Resolve = %p, %v; want the cached %p", s, err, first)
			}
		})
	}
	wg.Wait()
	if got := cat.All().Names(); !slices.Equal(got, []string{"echo", "sleep"}) {
		t.Errorf("All = %v", got)
	}
}

func TestNewCatalogDuplicate(t *testing.T) {
	if _, err := tools.NewCatalog(fake("echo", ""), fake("echo", "")); err == nil {
		t.Fatal("NewCatalog accepted a duplicate name")
	}
}
