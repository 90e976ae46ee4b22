package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tack-run/tack/store"
)

// TestCursor: a cursor survives its encoding, a malformed one is
// ErrInvalid, and Follows is List's order: updated_at desc, then id desc.
func TestCursor(t *testing.T) {
	c := store.Cursor{Updated: time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC), ID: "id:with:colons"}
	got, err := store.DecodeCursor(store.EncodeCursor(c))
	if err != nil || !got.Updated.Equal(c.Updated) || got.ID != c.ID {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for _, bad := range []string{"!", "", "YWJj", "MTox"[:3], "Ong"} {
		if _, err := store.DecodeCursor(bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("store.DecodeCursor(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	if !c.Follows(c.Updated.Add(-time.Microsecond), "z") || !c.Follows(c.Updated, "id") || c.Follows(c.Updated, c.ID) || c.Follows(c.Updated.Add(time.Microsecond), "a") {
		t.Fatal("Follows is not (updated_at desc, id desc) after the cursor")
	}
}
