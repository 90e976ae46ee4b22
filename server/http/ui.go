package http

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// uiPolicy is the Content-Security-Policy of the UI's files: the page
// loads nothing but its own files and talks only to this server, so text
// a model wrote can never run as script even if it reached the page as
// HTML.
const uiPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// uiFile is one file of the UI, read once when the server starts.
type uiFile struct {
	name  string
	body  []byte
	gz    []byte // body gzipped, nil when that saves nothing
	etag  string
	ctype string
}

// uiRoutes registers every file of fsys at its path (index.html at "/"
// only) as a public route: the page and its scripts hold no data, so they
// need no credential — the page asks for one when the API wants it.
func (s *Server) uiRoutes(fsys fs.FS) error {
	return fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := readUIFile(fsys, name)
		if err != nil {
			return err
		}
		route := "/" + name
		if name == "index.html" {
			route = "/"
			s.handle("GET /{$}", f)
		} else {
			s.handle("GET "+route, f)
		}
		s.public[route] = true
		return nil
	})
}

func readUIFile(fsys fs.FS, name string) (*uiFile, error) {
	body, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("ui: %w", err)
	}
	sum := sha256.Sum256(body)
	f := &uiFile{name: name, body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`,
		ctype: mime.TypeByExtension(path.Ext(name))}
	if f.ctype == "" {
		f.ctype = http.DetectContentType(body)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(body)
	_ = zw.Close()
	if buf.Len() < len(body) {
		f.gz = buf.Bytes()
	}
	return f, nil
}

// ServeHTTP serves the file, gzipped when the client takes it, with an
// ETag so a reload revalidates instead of downloading again (the names
// carry no content hash, so nothing may be cached without asking).
func (f *uiFile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", uiPolicy)
	h.Set("Referrer-Policy", "no-referrer")
	h.Add("Vary", "Accept-Encoding")
	body, etag := f.body, f.etag
	if f.gz != nil && acceptsGzip(r) {
		body, etag = f.gz, strings.TrimSuffix(f.etag, `"`)+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(body))
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.TrimSpace(q) != "q=0" {
			return true
		}
	}
	return false
}
