package rest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/media"
	"github.com/mediamock/mediamock/sim"
)

// serveFile serves a file, like a CDN (no authentication, no rate limit),
// with Content-Type (never sniffed), Content-Length, ETag, HEAD and byte ranges;
// ?download=1 makes it an attachment. who is whom the request's credential
// names, if it names anyone (the journal's entry is that workspace's).
func (f *Front) serveFile(w *edge.Writer, r *http.Request, who *sim.Principal) {
	// Uploads are the client's bytes: a browser must take them as the
	// Content-Type says, never guess HTML or script from them.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		edge.WriteError(w, wire.MethodNotAllowed(r.Method, "files", "GET, HEAD", []string{"GET", "HEAD"}))
		return
	}
	if err := f.env.Guard(r, "the files"); err != nil {
		edge.WriteError(w, err)
		return
	}
	eng := f.env.Eng
	// The address as it was sent: an encoded slash (%2f) is no separator,
	// and another spelling of an address is no address.
	ref, ok := eng.ParseFileRef(strings.TrimPrefix(r.URL.EscapedPath(), wire.FilesPath))
	if !ok {
		edge.WriteError(w, &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: "No such file."})
		return
	}
	w.Hand(edge.Outcome{Principal: who, File: &ref})
	file, content, err := eng.OpenFile(ref)
	if err == nil && ref.Ext != media.Extension(file.MimeType) {
		err = &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: "No such file."} // another extension: no address
	}
	if err == nil {
		err = w.FileAccess(ref, file.Modified.Time())
	}
	if err == nil {
		if h := w.Admission(fault.Request{Path: r.URL.Path}); h != nil {
			err = h.Admit(fault.ForceFunc(forcedFileError))
		}
	}
	if err != nil {
		edge.WriteError(w, err)
		return
	}
	etag, err := f.etags.of(ref.Path(), content)
	if err != nil {
		edge.WriteError(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", file.MimeType)
	// Addresses are predictable and a new state file with the same seed
	// reuses them for other bytes: clients revalidate every time, against
	// an ETag that is a hash of the content.
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache")
	if r.URL.Query().Get("download") != "" {
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, file.Name))
	}
	if r.Header.Get("If-Range") == "" && unsatisfiable(r.Header.Get("Range"), file.Size) {
		// net/http would answer a zero-length suffix (bytes=-0) with 206
		// and an empty body, and others in plain text.
		h.Set("Content-Range", "bytes */"+strconv.FormatInt(file.Size, 10))
		_, body := wire.ErrorOf(&sim.Error{Kind: sim.EINVALID, Code: "range_not_satisfiable",
			Message: "The Range " + r.Header.Get("Range") + " is not satisfiable: the file has " + strconv.FormatInt(file.Size, 10) + " bytes (a suffix range needs at least one byte).",
			Details: map[string]any{"size": file.Size}})
		edge.WriteJSON(w, http.StatusRequestedRangeNotSatisfiable, body)
		return
	}
	http.ServeContent(w, r, "", file.Modified.Time(), content)
}

// unsatisfiable reports whether a Range header of well-formed byte ranges
// has none that a file of size bytes can satisfy (RFC 9110, 14.1.1): each
// starts past the end, or is a suffix of zero bytes. A header that is not
// well formed is left to net/http.
func unsatisfiable(header string, size int64) bool {
	specs, ok := strings.CutPrefix(header, "bytes=")
	if !ok || strings.TrimSpace(specs) == "" {
		return false
	}
	for _, spec := range strings.Split(specs, ",") {
		first, last, ok := strings.Cut(strings.TrimSpace(spec), "-")
		if !ok {
			return false
		}
		if first == "" { // a suffix: the last n bytes
			n, err := strconv.ParseInt(last, 10, 64)
			if err != nil || n < 0 {
				return false
			}
			if n > 0 && size > 0 {
				return false
			}
			continue
		}
		start, err := strconv.ParseInt(first, 10, 64)
		if err != nil || start < 0 {
			return false
		}
		if last != "" {
			end, err := strconv.ParseInt(last, 10, 64)
			if err != nil || end < start {
				return false
			}
		}
		if start < size {
			return false
		}
	}
	return true
}

// etags remembers the content hash of recently served files: a file's
// bytes never change while its address stands, and hashing a 10 MiB upload
// on every request would cost more than serving it.
type etags struct {
	mu sync.Mutex
	m  map[string]string
}

// maxETags bounds the memory of the cache (about 100 bytes an entry).
const maxETags = 4096

func (c *etags) of(path string, content io.ReadSeeker) (string, error) {
	c.mu.Lock()
	tag, ok := c.m[path]
	c.mu.Unlock()
	if ok {
		return tag, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, content); err != nil {
		return "", err
	}
	if _, err := content.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	tag = `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxETags {
		c.m = make(map[string]string)
	}
	c.m[path] = tag
	c.mu.Unlock()
	return tag, nil
}

// forcedFileError is the error a status fault forces on a file: files are
// no operation of the document, so the rule's status (an error status
// every operation declares) with its error object, or the error object of
// its code and message.
func forcedFileError(f fault.Forced) error {
	e := gate.ForcedError(f.Status, sim.RateDecision{})
	if k, ok := wire.KindOf(f.Status); ok && k != e.Kind {
		e = &sim.Error{Kind: k, Code: strings.ToLower(strings.ReplaceAll(http.StatusText(f.Status), " ", "_")),
			Message: http.StatusText(f.Status) + " (forced by the control API)."}
	}
	if f.Code != "" {
		e.Code = f.Code
	}
	if f.Message != "" {
		e.Message = f.Message
	}
	return e
}
