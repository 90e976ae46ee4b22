package a2aserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// fileStore is the SDK's in-memory task store, each task also written to
// a file of its own in dir (atomically: a temporary file renamed), and
// read back from there when the store opens: tasks survive a restart.
type fileStore struct {
	*taskstore.InMemory
	dir string
}

// storedFile is a task's file.
type storedFile struct {
	User string    `json:"user"`
	Task *a2a.Task `json:"task"`
}

// restoring carries the owner of a task read back from its file.
type restoring struct{}

// taskOwner is the user of a store call: the caller's (the SDK's call
// context), or that of a task being read back.
func taskOwner(ctx context.Context) (string, error) {
	if u, ok := ctx.Value(restoring{}).(string); ok {
		return u, nil
	}
	return a2asrv.NewTaskStoreAuthenticator()(ctx)
}

// newStore returns the task store: in memory when dir is "", else kept
// in dir (made if need be), whose tasks it reads.
func newStore(dir string) (taskstore.Store, error) {
	mem := taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{Authenticator: taskOwner})
	if dir == "" {
		return mem, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("a2a: task store: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("a2a: task store: %w", err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("a2a: task store: %w", err)
		}
		var f storedFile
		if err := json.Unmarshal(b, &f); err != nil || f.Task == nil {
			return nil, fmt.Errorf("a2a: task store: %s is not a stored task: %v", e.Name(), err)
		}
		if _, err := mem.Create(context.WithValue(context.Background(), restoring{}, f.User), f.Task); err != nil {
			return nil, fmt.Errorf("a2a: task store: %s: %w", e.Name(), err)
		}
	}
	return &fileStore{InMemory: mem, dir: dir}, nil
}

// Create creates the task and writes it.
func (s *fileStore) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	v, err := s.InMemory.Create(ctx, task)
	if err == nil {
		err = s.write(ctx, task.ID)
	}
	return v, err
}

// Update updates the task and writes it.
func (s *fileStore) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	v, err := s.InMemory.Update(ctx, req)
	if err == nil {
		err = s.write(ctx, req.Task.ID)
	}
	return v, err
}

// write writes task id as it now stands.
func (s *fileStore) write(ctx context.Context, id a2a.TaskID) error {
	st, err := s.InMemory.Get(ctx, id)
	if err != nil {
		return err
	}
	b, err := json.Marshal(storedFile{User: st.User, Task: st.Task})
	if err != nil {
		return err
	}
	name := filepath.Join(s.dir, fileName(id))
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// fileName is task id's file: ids are the SDK's UUIDs or a client's, so
// anything but [A-Za-z0-9_-] is escaped.
func fileName(id a2a.TaskID) string {
	var b strings.Builder
	for _, c := range []byte(id) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02x", c)
		}
	}
	return b.String() + ".json"
}
