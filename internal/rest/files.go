package rest

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mediamock/mediamock/internal/front"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// serveFile serves a file, like a CDN (no authentication, no rate limit),
// with Content-Type, Content-Length, ETag, HEAD and byte ranges;
// ?download=1 makes it an attachment.
func (f *Front) serveFile(w *front.Writer, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		front.WriteError(w, wire.MethodNotAllowed(r.Method, "files", "GET, HEAD", []string{"GET", "HEAD"}))
		return
	}
	eng := f.env.Eng
	ref, ok := eng.ParseFileRef(strings.TrimPrefix(r.URL.Path, wire.FilesPath))
	if !ok {
		front.WriteError(w, &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: "No such file."})
		return
	}
	file, content, err := eng.OpenFile(ref)
	if err != nil {
		front.WriteError(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", file.MimeType)
	// The token changes with every reset and restore: an address always
	// serves the same bytes, which may be cached for good.
	h.Set("ETag", fmt.Sprintf(`"%s-%d"`, ref.Token, file.Size))
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	if r.URL.Query().Get("download") != "" {
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, file.Name))
	}
	http.ServeContent(w, r, "", file.Modified.Time(), content)
}
