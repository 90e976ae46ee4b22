package a2aserver

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestStoreOpensClean: a store reads its tasks back dated by their own
// status time (ListTasks lists the latest first across a restart too),
// and removes what a write left unfinished, which may hold the text of a
// task since forgotten.
func TestStoreOpensClean(t *testing.T) {
	dir := t.TempDir()
	old, recent := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	s, err := newStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	for id, at := range map[a2a.TaskID]time.Time{"t-old": old, "t-recent": recent} {
		st := &storedTask{task: &a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: &at}}, user: "alice"}
		if err := s.write(st); err != nil {
			t.Fatal(err)
		}
	}
	leftover := filepath.Join(dir, "t-gone.json.tmp")
	if err := os.WriteFile(leftover, []byte(`{"task":{"history":"SECRET"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = newStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("the unfinished write is still there: %v", err)
	}
	if got := s.tasks["t-recent"].updated; !got.Equal(recent) {
		t.Errorf("t-recent read back dated %v, want its status time %v", got, recent)
	}
	if got := s.tasks["t-old"].updated; !got.Equal(old) {
		t.Errorf("t-old read back dated %v, want %v", got, old)
	}
}
