package http

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/tack-run/tack/events"
	"github.com/tack-run/tack/tools/workspace"
)

// fileRoutes registers the routes of a session's workspace files
// (docs/http.md#files).
func (s *Server) fileRoutes() {
	s.handle("GET /v1/sessions/{id}/files", s.files(s.listFiles))
	s.handle("GET /v1/sessions/{id}/files/{path...}", s.files(s.getFile))
	s.handle("PUT /v1/sessions/{id}/files/{path...}", s.files(s.putFile))
	s.handle("DELETE /v1/sessions/{id}/files/{path...}", s.files(s.deleteFile))
}

// fileEntry is one file of GET /v1/sessions/{id}/files.
type fileEntry struct {
	Path     string    `json:"path"`
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
}

// fileHandler serves a file route once the owner and the path are
// checked: root is the session's workspace (nil when it has none yet),
// rel the clean path inside it ("" for the list).
type fileHandler func(w http.ResponseWriter, r *http.Request, id string, root *os.Root, rel string)

// files checks that the caller owns the session and that the path stays
// in its workspace, opens the workspace, checks the owner again, then
// calls h: a workspace opened while the id was the caller's stays that
// session's directory (removed, if the id changes hands, before a new
// session uses it), and one opened after the id changed hands fails the
// second check.
func (s *Server) files(h fileHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if err := s.owns(r.Context(), r, id); err != nil {
			writeError(w, err)
			return
		}
		rel := r.PathValue("path")
		if r.Pattern != "GET /v1/sessions/{id}/files" {
			if !filepath.IsLocal(rel) || strings.Contains(rel, `\`) || path.Clean(rel) != rel {
				writeError(w, protoError(events.CodeBadRequest, fmt.Sprintf("path %q leaves the workspace (a file path is relative, without . or .. parts)", rel)))
				return
			}
		}
		ws := s.rt.Workspaces()
		var dir string
		var err error
		if r.Method == http.MethodPut {
			dir, err = ws.Make(id)
		} else {
			dir, err = ws.Path(id)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		root, err := os.OpenRoot(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist) && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			root = nil // no workspace yet
		case err != nil:
			fileError(w, rel, err)
			return
		default:
			defer root.Close()
		}
		if err := s.owns(r.Context(), r, id); err != nil {
			writeError(w, err)
			return
		}
		h(w, r, id, root, rel)
	})
}

// maxListed bounds the entries a listing of the files looks at
// (workspace.List): past it the answer says "truncated": true.
const maxListed = 10000

// listFiles answers with the regular files of the workspace, walked
// without following symbolic links and through the workspace's root, at
// most maxListed entries looked at.
func (s *Server) listFiles(w http.ResponseWriter, r *http.Request, id string, root *os.Root, _ string) {
	if root == nil { // no workspace yet: no files
		writeJSON(w, http.StatusOK, map[string]any{"files": []fileEntry{}})
		return
	}
	files, more, err := workspace.List(root, maxListed)
	if err != nil {
		s.opts.logger.Warn("listing a workspace failed", zap.String("session", id), zap.Error(err))
		writeError(w, protoError(events.CodeInternal, "listing the workspace failed"))
		return
	}
	list := make([]fileEntry, len(files))
	for i, f := range files {
		list[i] = fileEntry(f)
	}
	answer := map[string]any{"files": list}
	if more {
		answer["truncated"] = true
	}
	writeJSON(w, http.StatusOK, answer)
}

// getFile answers with the file's bytes. A named pipe, socket or device
// is refused (400) without waiting on it; a directory is no file (404).
func (s *Server) getFile(w http.ResponseWriter, r *http.Request, id string, root *os.Root, rel string) {
	if root == nil {
		fileError(w, rel, fs.ErrNotExist)
		return
	}
	f, err := workspace.Open(root, rel)
	if err != nil {
		fileError(w, rel, err)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		fileError(w, rel, fs.ErrNotExist)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", path.Base(rel)))
	http.ServeContent(w, r, "", info.ModTime(), f)
}

// putFile writes the body to the file, making its directories, and
// gives both to the workspace's owner. An existing named pipe, socket or
// device is refused (400), never written into nor waited on.
func (s *Server) putFile(w http.ResponseWriter, r *http.Request, id string, root *os.Root, rel string) {
	uid, gid := s.rt.Workspaces().Owner()
	if d := path.Dir(rel); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			fileError(w, rel, err)
			return
		}
	}
	f, err := workspace.Create(root, rel, 0o644)
	if err != nil {
		fileError(w, rel, err)
		return
	}
	n, err := io.Copy(f, r.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if isTooLarge(err) {
			_ = root.Remove(rel)
			writeErrorStatus(w, http.StatusRequestEntityTooLarge, events.CodeBadRequest, err.Error())
			return
		}
		fileError(w, rel, err)
		return
	}
	if uid >= 0 {
		for p := rel; p != "."; p = path.Dir(p) {
			if err := root.Lchown(p, uid, gid); err != nil {
				fileError(w, rel, err)
				return
			}
		}
	}
	info, err := root.Stat(rel)
	if err != nil {
		fileError(w, rel, err)
		return
	}
	s.audit(userOf(r), "file_written", id, nil, zap.String("path", rel), zap.Int64("size", n))
	writeJSON(w, http.StatusCreated, fileEntry{Path: rel, Size: info.Size(), Modified: info.ModTime().UTC()})
}

// deleteFile removes a file (or an empty directory).
func (s *Server) deleteFile(w http.ResponseWriter, r *http.Request, id string, root *os.Root, rel string) {
	if err := root.Remove(rel); err != nil {
		fileError(w, rel, err)
		return
	}
	s.audit(userOf(r), "file_deleted", id, nil, zap.String("path", rel))
	w.WriteHeader(http.StatusNoContent)
}

// fileError answers for an error of os.Root about rel: a path that a
// symbolic link leads out of the workspace is 400, as is one that is not
// a regular file (a named pipe); a missing file is 404.
func fileError(w http.ResponseWriter, rel string, err error) {
	var notRegular *workspace.NotRegularError
	switch {
	case errors.As(err, &notRegular):
		writeError(w, protoError(events.CodeBadRequest, notRegular.Error()))
	case workspace.Escapes(err):
		writeError(w, protoError(events.CodeBadRequest, fmt.Sprintf("path %q leads out of the workspace (through a symbolic link)", rel)))
	case errors.Is(err, fs.ErrNotExist):
		writeErrorStatus(w, http.StatusNotFound, events.CodeBadRequest, fmt.Sprintf("no file %q in the workspace", rel))
	case errors.Is(err, fs.ErrPermission):
		writeError(w, protoError(events.CodeForbidden, fmt.Sprintf("%q: permission denied", rel)))
	default:
		writeError(w, protoError(events.CodeBadRequest, fmt.Sprintf("%q: %v", rel, err)))
	}
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
