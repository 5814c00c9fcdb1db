// Package dashboard is the browser front of a server: one page under
// /_mock/ui/ that shows the simulation live (workspaces, jobs, the library,
// publications, the clock, the journal, the ledger, coverage and faults)
// and acts on it. The page is plain HTML, CSS and JavaScript embedded in the
// binary (no build step, nothing loaded from elsewhere); it reads and acts
// through the control API (package control) and follows GET /_mock/events,
// so it holds no privilege of its own: the control token, when the server
// has one, is what it sends.
//
// The files are served to the hosts the control API serves (front.Env.Guard)
// with a Content-Security-Policy that allows only the server's own origin.
package dashboard

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/mediamock/mediamock/internal/front"
	"github.com/mediamock/mediamock/internal/wire"
)

// Path is where the dashboard is served.
const Path = "/_mock/ui"

//go:embed ui
var files embed.FS

// file is one embedded file, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

var contentTypes = map[string]string{".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
	".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}

// Front serves the dashboard of one server.
type Front struct {
	env   *front.Env
	files map[string]file // by name below Path
	csp   string
}

// loaded reads the embedded files once per process.
var loaded = sync.OnceValue(func() map[string]file {
	out := map[string]file{}
	err := fs.WalkDir(files, "ui", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		out[strings.TrimPrefix(name, "ui/")] = file{body: body, contentType: contentTypes[path.Ext(name)],
			etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("dashboard: embedded files: " + err.Error())
	}
	return out
})

// New returns the dashboard front of a server.
func New(env *front.Env) *Front {
	f := &Front{env: env, files: loaded()}
	// Files are linked from the server's own origin, or from the public URL.
	media := "'self'"
	if u, err := url.Parse(env.PublicURL); err == nil && u.Scheme != "" && u.Host != "" {
		media += " " + u.Scheme + "://" + u.Host
	}
	f.csp = "default-src 'self'; img-src " + media + "; media-src " + media + "; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	return f
}

// FileQuery marks the file requests the page makes (thumbnails, files
// opened from the library): they are not the client's, so the journal
// leaves them out.
const FileQuery = "via=dashboard"

// Fetched reports whether a request is a file the page fetched.
func Fetched(r *http.Request) bool {
	return r.URL.RawQuery == FileQuery && strings.HasPrefix(r.URL.Path, wire.FilesPath)
}

// Serves reports whether a request is the dashboard's: the page and its
// files, and GET / (which leads to the page).
func Serves(r *http.Request) bool {
	return front.HasPathPrefix(r.URL.Path, Path) ||
		(r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead))
}

// Serve serves a dashboard request that passed the edge.
func (f *Front) Serve(w *front.Writer, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		front.WriteError(w, wire.MethodNotAllowed(r.Method, r.URL.Path, "GET, HEAD", []string{"GET", "HEAD"}))
		return
	}
	if r.URL.Path == "/" || r.URL.Path == Path {
		// Only a redirect: it shows nothing, so it needs no guard.
		http.Redirect(w, r, Path+"/", http.StatusFound)
		return
	}
	if err := f.env.Guard(r, "the dashboard"); err != nil {
		front.WriteError(w, err)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, Path+"/")
	if name == "" {
		name = "index.html"
	}
	file, ok := f.files[name]
	if !ok {
		front.WriteError(w, wire.NotFound(r.Method, r.URL.Path))
		return
	}
	h := w.Header()
	h.Set("Content-Type", file.contentType)
	h.Set("ETag", file.etag)
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", f.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if r.Header.Get("If-None-Match") == file.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(file.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(file.body)
	}
}

// Weight is the size in bytes of the page's files by extension (html,
// css, js, svg): what a browser loads to show the dashboard.
func Weight() map[string]int {
	out := map[string]int{}
	for name, f := range loaded() {
		out[strings.TrimPrefix(path.Ext(name), ".")] += len(f.body)
	}
	return out
}
