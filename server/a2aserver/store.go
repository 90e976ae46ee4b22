package a2aserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// taskStore is one agent's tasks: in memory as a2a-go's own in-memory
// store keeps them (each its creator's; the same versions, listing order,
// pages and history trimming), each also written to a file of its own in
// dir when dir is set (atomically: a temporary file renamed) and read back
// from there when the store opens, so that tasks survive a restart. Unlike
// a2a-go's, it forgets the tasks of a context (forget): a deleted
// session's tasks leave memory and their files.
type taskStore struct {
	dir string // "": memory only
	// mu orders every change and its file: a task forgotten is never
	// written again by an update that raced the forgetting.
	mu    sync.RWMutex
	tasks map[a2a.TaskID]*storedTask
}

// storedTask is a task as the store holds it.
type storedTask struct {
	task    *a2a.Task
	version taskstore.TaskVersion
	user    string
	updated time.Time
}

var _ taskstore.Store = (*taskStore)(nil)

// storedFile is a task's file.
type storedFile struct {
	User string    `json:"user"`
	Task *a2a.Task `json:"task"`
}

// taskOwner is the user of a store call: the caller's (the SDK's call
// context).
func taskOwner(ctx context.Context) (string, error) {
	return a2asrv.NewTaskStoreAuthenticator()(ctx)
}

// newStore returns the task store: in memory when dir is "", else kept
// in dir (made if need be), whose tasks it reads.
func newStore(dir string) (*taskStore, error) {
	s := &taskStore{dir: dir, tasks: map[a2a.TaskID]*storedTask{}}
	if dir == "" {
		return s, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("a2a: task store: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("a2a: task store: %w", err)
	}
	now := time.Now()
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json.tmp") {
			// A write the process did not finish: its task's file is the
			// one before it. It may hold text of a task since forgotten.
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return nil, fmt.Errorf("a2a: task store: %w", err)
			}
			continue
		}
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
		if _, ok := s.tasks[f.Task.ID]; ok {
			return nil, fmt.Errorf("a2a: task store: %s: %w", e.Name(), taskstore.ErrTaskAlreadyExists)
		}
		updated := now // the order of ListTasks, latest first: the task's own time when it has one
		if ts := f.Task.Status.Timestamp; ts != nil {
			updated = *ts
		}
		s.tasks[f.Task.ID] = &storedTask{task: f.Task, version: 1, user: f.User, updated: updated}
	}
	return s, nil
}

// Create stores a new task of the caller.
func (s *taskStore) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	if err := validTask(task); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	user, err := taskOwner(ctx)
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("taskstore auth failed: %w", err)
	}
	c, err := deepCopy(task)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tasks[task.ID] != nil {
		return taskstore.TaskVersionMissing, taskstore.ErrTaskAlreadyExists
	}
	st := &storedTask{task: c, version: 1, user: user, updated: time.Now()}
	if err := s.write(st); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	s.tasks[task.ID] = st
	return st.version, nil
}

// Update replaces a task of the caller.
func (s *taskStore) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	if err := validTask(req.Task); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	user, err := taskOwner(ctx)
	if err != nil {
		return taskstore.TaskVersionMissing, fmt.Errorf("taskstore auth failed: %w", err)
	}
	c, err := deepCopy(req.Task)
	if err != nil {
		return taskstore.TaskVersionMissing, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.tasks[req.Task.ID]
	if old == nil || old.user != user {
		return taskstore.TaskVersionMissing, a2a.ErrTaskNotFound
	}
	if req.PrevVersion != taskstore.TaskVersionMissing && old.version != req.PrevVersion {
		return taskstore.TaskVersionMissing, taskstore.ErrConcurrentModification
	}
	st := &storedTask{task: c, version: old.version + 1, user: old.user, updated: time.Now()}
	if err := s.write(st); err != nil {
		return taskstore.TaskVersionMissing, err
	}
	s.tasks[req.Task.ID] = st
	return st.version, nil
}

// Get returns a task of the caller; another user's is not found.
func (s *taskStore) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	s.mu.RLock()
	st, ok := s.tasks[id]
	s.mu.RUnlock()
	if !ok {
		return nil, a2a.ErrTaskNotFound
	}
	user, err := taskOwner(ctx)
	if err != nil {
		return nil, fmt.Errorf("taskstore auth failed: %w", err)
	}
	if st.user != user {
		return nil, a2a.ErrTaskNotFound
	}
	task, err := deepCopy(st.task)
	if err != nil {
		return nil, fmt.Errorf("task copy failed: %w", err)
	}
	return &taskstore.StoredTask{Task: task, Version: st.version, User: st.user}, nil
}

// List lists the caller's tasks as a2a-go's in-memory store does: the
// latest updated first, in pages, filtered by the request.
func (s *taskStore) List(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	const defaultPageSize, defaultHistory = 50, 100
	user, err := taskOwner(ctx)
	if user == "" || err != nil {
		return nil, a2a.ErrUnauthenticated
	}
	size := req.PageSize
	if size == 0 {
		size = defaultPageSize
	} else if size < 1 || size > 100 {
		return nil, fmt.Errorf("page size must be between 1 and 100 inclusive, got %d: %w", size, a2a.ErrInvalidRequest)
	}
	var found []*storedTask
	s.mu.RLock()
	for _, st := range s.tasks {
		t := st.task
		switch {
		case st.user != user,
			req.ContextID != "" && t.ContextID != req.ContextID,
			req.Status != a2a.TaskStateUnspecified && t.Status.State != req.Status,
			req.StatusTimestampAfter != nil && t.Status.Timestamp != nil && t.Status.Timestamp.Before(*req.StatusTimestampAfter):
			continue
		}
		found = append(found, st)
	}
	s.mu.RUnlock()
	total := len(found)
	slices.SortFunc(found, func(a, b *storedTask) int {
		if c := b.updated.Compare(a.updated); c != 0 {
			return c
		}
		return strings.Compare(string(b.task.ID), string(a.task.ID))
	})
	page := found
	if req.PageToken != "" {
		at, id, err := decodePageToken(req.PageToken)
		if err != nil {
			return nil, err
		}
		page = found[sort.Search(len(found), func(i int) bool {
			c := found[i].updated.Compare(at)
			return c < 0 || c == 0 && strings.Compare(string(found[i].task.ID), string(id)) < 0
		}):]
	}
	next := ""
	if size < len(page) {
		last := page[size-1]
		next = base64.URLEncoding.EncodeToString(fmt.Appendf(nil, "%s_%s", last.updated.Format(time.RFC3339Nano), last.task.ID))
		page = page[:size]
	}
	var tasks []*a2a.Task
	for _, st := range page {
		t, err := deepCopy(st.task)
		if err != nil {
			return nil, err
		}
		n := defaultHistory
		if req.HistoryLength != nil {
			n = *req.HistoryLength
		}
		if n == 0 {
			t.History = []*a2a.Message{}
		} else if n > 0 && len(t.History) > n {
			t.History = t.History[len(t.History)-n:]
		}
		if !req.IncludeArtifacts {
			t.Artifacts = nil
		}
		tasks = append(tasks, t)
	}
	return &a2a.ListTasksResponse{Tasks: tasks, TotalSize: total, PageSize: size, NextPageToken: next}, nil
}

// decodePageToken reads a page token of List.
func decodePageToken(token string) (time.Time, a2a.TaskID, error) {
	b, err := base64.URLEncoding.DecodeString(token)
	if err != nil {
		return time.Time{}, "", a2a.ErrParseError
	}
	stamp, id, ok := strings.Cut(string(b), "_") // the time has no "_"; the id may
	if !ok {
		return time.Time{}, "", a2a.ErrParseError
	}
	at, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return time.Time{}, "", a2a.ErrParseError
	}
	return at, a2a.TaskID(id), nil
}

// contexts lists the contexts the store holds tasks of.
func (s *taskStore) contexts() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	seen := map[string]bool{}
	var ids []string
	for _, st := range s.tasks {
		if id := st.task.ContextID; !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// forget removes the tasks of context id, and of its sub-agents'
// contexts (id/...), from memory and from their files.
func (s *taskStore) forget(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for tid, st := range s.tasks {
		if c := st.task.ContextID; c != id && !strings.HasPrefix(c, id+"/") {
			continue
		}
		delete(s.tasks, tid)
		if s.dir != "" {
			if err := os.Remove(filepath.Join(s.dir, fileName(tid))); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// write writes st's file, when the store keeps files; s.mu is held.
func (s *taskStore) write(st *storedTask) error {
	if s.dir == "" {
		return nil
	}
	b, err := json.Marshal(storedFile{User: st.user, Task: st.task})
	if err != nil {
		return err
	}
	name := filepath.Join(s.dir, fileName(st.task.ID))
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

// validTask refuses a nil task, as a2a-go's stores do; what they check
// besides is metadata that refers to itself, which tasks made of JSON
// cannot hold.
func validTask(t *a2a.Task) error {
	if t == nil {
		return errors.New("task is nil")
	}
	return nil
}

// deepCopy copies a task as a2a-go's in-memory store does (gob; the
// package taskstore registers the types data parts hold).
func deepCopy(t *a2a.Task) (*a2a.Task, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(*t); err != nil {
		return nil, err
	}
	var c a2a.Task
	if err := gob.NewDecoder(&buf).Decode(&c); err != nil {
		return nil, err
	}
	return &c, nil
}
