package mediamock

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mediamock/mediamock/sim"
)

// FilesPath is where generated and uploaded files are served, outside the
// API's base path, like a CDN: no authentication, no rate limit.
const FilesPath = "/files/"

func mountFiles(router *mux.Router) {
	router.PathPrefix(FilesPath).Methods(http.MethodGet, http.MethodHead).HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(*respWriter).s.serveFile(w, r)
	})
	router.PathPrefix(FilesPath).HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w.(*respWriter), &sim.Error{Kind: sim.ENOTALLOWED, Code: "method_not_allowed",
			Message: fmt.Sprintf("%s is not allowed on files; allowed: GET, HEAD.", r.Method), Details: map[string]any{"allowed_methods": []string{"GET", "HEAD"}}})
	})
}

// serveFile serves a file with Content-Type, Content-Length, ETag, HEAD and
// byte ranges; ?download=1 makes it an attachment.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	ref, ok := s.eng.ParseFileRef(strings.TrimPrefix(r.URL.Path, FilesPath))
	if !ok {
		writeError(w.(*respWriter), &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: "No such file."})
		return
	}
	f, content, err := s.eng.OpenFile(ref)
	if err != nil {
		writeError(w.(*respWriter), err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.MimeType)
	// The token changes with every reset and restore: an address always
	// serves the same bytes, which may be cached for good.
	h.Set("ETag", fmt.Sprintf(`"%s-%d"`, ref.Token, f.Size))
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	if r.URL.Query().Get("download") != "" {
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, f.Name))
	}
	http.ServeContent(w, r, "", f.Modified.Time(), content)
}
