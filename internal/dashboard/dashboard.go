// Package dashboard is the browser front of a server: one page under
// /_mock/ui/ that shows the simulation live (workspaces, jobs, the library,
// publications, the clock, the journal, the ledger, coverage and faults)
// and acts on it. The page is plain HTML, CSS and JavaScript embedded in the
// binary (no build step, nothing loaded from elsewhere); it reads and acts
// through the control API (package control) and follows GET /_mock/events,
// so it holds no privilege of its own: the control token, when the server
// has one, is what it sends.
//
// The files are served to the hosts the control API serves (edge.Env.Guard)
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

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
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
	env   *edge.Env
	files map[string]file // by name below Path
	csp   string

	previewMu sync.Mutex
	previews  map[string]file // drawn previews, by file path (see preview)
}

// PreviewPath is where the library's previews are served, below Path:
// previews/ then the path of the asset's file below /files/. The API has
// none; they are the page's.
const PreviewPath = "previews/"

// maxPreviews bounds the previews kept in memory (a poster of 1080p is
// about 100 kB); beyond it the cache starts again.
const maxPreviews = 256

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
func New(env *edge.Env) *Front {
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
	return edge.HasPathPrefix(r.URL.Path, Path) ||
		(r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead))
}

// Serve serves a dashboard request that passed the edge.
func (f *Front) Serve(w *edge.Writer, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		edge.WriteError(w, wire.MethodNotAllowed(r.Method, r.URL.Path, "GET, HEAD", []string{"GET", "HEAD"}))
		return
	}
	if r.URL.Path == "/" || r.URL.Path == Path {
		// Only a redirect: it shows nothing, so it needs no guard.
		http.Redirect(w, r, Path+"/", http.StatusFound)
		return
	}
	if err := f.env.Guard(r, "the dashboard"); err != nil {
		edge.WriteError(w, err)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, Path+"/")
	if name == "" {
		name = "index.html"
	}
	if rest, ok := strings.CutPrefix(name, PreviewPath); ok {
		f.preview(w, r, rest)
		return
	}
	file, ok := f.files[name]
	if !ok {
		edge.WriteError(w, wire.NotFound(r.Method, r.URL.Path))
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

// preview serves the picture the library shows for a video (its poster),
// an audio file (its waveform) or a 3D model (a view of it). rest is the
// path of the asset's file below /files/, token included, so a preview is
// as hard to guess as the file. Previews are drawn on first request and
// kept by that path, which changes when the state is reset or restored.
func (f *Front) preview(w *edge.Writer, r *http.Request, rest string) {
	ref, ok := f.env.Eng.ParseFileRef(rest)
	if !ok || ref.Class != sim.FileAsset {
		edge.WriteError(w, wire.NotFound(r.Method, r.URL.Path))
		return
	}
	key := ref.Path()
	f.previewMu.Lock()
	p, ok := f.previews[key]
	f.previewMu.Unlock()
	if !ok {
		_, mime, data, err := f.env.Eng.AssetPreview(ref.WS, ref.ID)
		if err != nil {
			edge.WriteError(w, err)
			return
		}
		sum := sha256.Sum256(data)
		p = file{body: data, contentType: mime, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		f.previewMu.Lock()
		if f.previews == nil || len(f.previews) >= maxPreviews {
			f.previews = map[string]file{}
		}
		f.previews[key] = p
		f.previewMu.Unlock()
	}
	h := w.Header()
	h.Set("Content-Type", p.contentType)
	h.Set("ETag", p.etag)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Header.Get("If-None-Match") == p.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(p.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(p.body)
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
