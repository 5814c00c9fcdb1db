package proxy

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mediamock/mediamock/internal/check"
)

// keepRequestBody keeps up to max bytes of the request body for validation
// and forwards the body whole either way.
func (p *Proxy) keepRequestBody(r *http.Request, x *exchange) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	if r.ContentLength > p.max {
		x.skipped = fmt.Sprintf("%d bytes, over the %d kept for validation", r.ContentLength, p.max)
		return
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, p.max+1))
	if int64(len(buf)) > p.max {
		x.skipped = fmt.Sprintf("over the %d bytes kept for validation", p.max)
		r.Body = readCloser{io.MultiReader(bytes.NewReader(buf), r.Body), r.Body}
		return
	}
	if err != nil {
		// The client's body broke off: forward what came, and let the
		// upstream say what it makes of it.
		x.skipped = "the request body could not be read: " + err.Error()
		r.Body = readCloser{io.MultiReader(bytes.NewReader(buf), errReader{err}), r.Body}
		return
	}
	x.body = buf
	r.Body = io.NopCloser(bytes.NewReader(buf))
	r.ContentLength = int64(len(buf))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
}

type readCloser struct {
	io.Reader
	io.Closer
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// keepResponseBody reads up to max bytes of a JSON body into ex and puts
// the body back whole for the client. A larger body, a body in an encoding
// other than gzip, or a body that is not JSON is passed on unchecked.
func (p *Proxy) keepResponseBody(resp *http.Response, ex *check.Exchange) error {
	if resp.Request.Method == http.MethodHead || resp.StatusCode == http.StatusSwitchingProtocols || resp.Body == nil || resp.Body == http.NoBody {
		return nil
	}
	if !check.IsJSON(resp.Header) {
		ex.ResponseSkipped = fmt.Sprintf("not JSON (Content-Type %q)", resp.Header.Get("Content-Type"))
		return nil
	}
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if enc != "" && enc != "identity" && enc != "gzip" {
		ex.ResponseSkipped = fmt.Sprintf("Content-Encoding %q is not decoded for validation", enc)
		return nil
	}
	if resp.ContentLength > p.max {
		ex.ResponseSkipped = fmt.Sprintf("%d bytes, over the %d kept for validation", resp.ContentLength, p.max)
		return nil
	}
	orig := resp.Body
	buf, err := io.ReadAll(io.LimitReader(orig, p.max+1))
	if err != nil {
		return fmt.Errorf("read the upstream's response: %w", err)
	}
	if int64(len(buf)) > p.max {
		ex.ResponseSkipped = fmt.Sprintf("over the %d bytes kept for validation", p.max)
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(buf), orig), orig}
		return nil
	}
	resp.Body = readCloser{bytes.NewReader(buf), orig}
	if enc != "gzip" {
		ex.ResponseBody = buf
		return nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(buf))
	if err == nil {
		var plain []byte
		plain, err = io.ReadAll(io.LimitReader(zr, p.max+1))
		switch {
		case err == nil && int64(len(plain)) > p.max:
			ex.ResponseSkipped = fmt.Sprintf("over the %d bytes kept for validation once decompressed", p.max)
		case err == nil:
			ex.ResponseBody = plain
		}
	}
	if err != nil {
		ex.ResponseSkipped = "the gzip body cannot be decompressed: " + err.Error()
	}
	return nil
}
