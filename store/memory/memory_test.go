package memory_test

import (
	"testing"

	"github.com/tack-run/tack/store"
	"github.com/tack-run/tack/store/memory"
	"github.com/tack-run/tack/store/storetest"
)

func newStore(tb testing.TB, opts ...store.Option) store.Store {
	st := memory.New(opts...)
	tb.Cleanup(func() { st.Close() })
	return st
}

func TestConformance(t *testing.T) { storetest.Run(t, newStore) }

func TestClosed(t *testing.T) {
	st := memory.New()
	st.Close()
	if err := st.Create(t.Context(), "s1", store.Config{}); err == nil {
		t.Fatal("Create after Close succeeded")
	}
	if _, err := st.List(t.Context(), store.Page{}); err == nil {
		t.Fatal("List after Close succeeded")
	}
}
