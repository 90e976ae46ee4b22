package sqlite_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	eventsv1 "github.com/tack-run/tack/events/v1"
	"github.com/tack-run/tack/store"
)

// TestDeleteErasesText: once a deleted session's store is closed (which
// checkpoints the WAL into the file), none of its text is left in the
// database's files — secure_delete zeroes what the rows held — while the
// text of a session that stays is there to be found, so the search looks
// where it should.
func TestDeleteErasesText(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tack.db")
	st := openAt(t, path)
	ctx := t.Context()
	write := func(id, secret string) {
		t.Helper()
		if err := st.Create(ctx, id, store.Config{Model: "m", Spec: []byte(`{"system":"system ` + secret + `"}`)}); err != nil {
			t.Fatal(err)
		}
		for i := range 20 { // enough to spill over several pages
			m := &eventsv1.Message{Role: "user", Content: strings.Repeat(secret+" ", 40)}
			if err := st.Apply(ctx, id, &store.Batch{From: i, Messages: []*eventsv1.Message{m}, Title: "title " + secret}); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("gone", "SECRET-GONE-1f3a")
	write("gone/sub-1", "SECRET-CHILD-77c1")
	write("kept", "KEPT-TEXT-90ab")
	if err := st.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(path + "*")
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	for _, gone := range []string{"SECRET-GONE-1f3a", "SECRET-CHILD-77c1"} {
		if bytes.Contains(all, []byte(gone)) {
			t.Errorf("%q is still in %v after the delete", gone, files)
		}
	}
	if !bytes.Contains(all, []byte("KEPT-TEXT-90ab")) {
		t.Errorf("the kept session's text is not in %v: the search looks in the wrong place", files)
	}
}
