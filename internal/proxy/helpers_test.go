package proxy_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/proxy"
)

// syncBuffer is a buffer several goroutines write to: a report, a log.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// front is a proxy under test, listening on loopback, with its report and
// log kept.
type front struct {
	p      *proxy.Proxy
	srv    *httptest.Server
	report *syncBuffer
	log    *syncBuffer
}

func startProxy(t *testing.T, upstream string, opts ...func(*proxy.Options)) *front {
	t.Helper()
	f := &front{report: &syncBuffer{}, log: &syncBuffer{}}
	o := proxy.Options{Upstream: upstream, Document: mediamock.OpenAPIDocument, Report: f.report,
		Logger: slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	for _, fn := range opts {
		fn(&o)
	}
	p, err := proxy.New(o)
	require.NoError(t, err)
	f.p = p
	f.srv = httptest.NewServer(p)
	t.Cleanup(func() {
		f.srv.Close()
		p.Close() // its connections to the upstream, before the upstream stops
	})
	return f
}

// base is the proxy's REST base address.
func (f *front) base() string { return f.srv.URL + check.BasePath }

// lines are the report's lines, decoded.
func (f *front) lines(t *testing.T) []proxy.Line {
	t.Helper()
	var out []proxy.Line
	for _, l := range strings.Split(strings.TrimSpace(f.report.String()), "\n") {
		if l == "" {
			continue
		}
		var line proxy.Line
		require.NoError(t, json.Unmarshal([]byte(l), &line), l)
		out = append(out, line)
	}
	return out
}

// response is a response read whole.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r *response) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &m), "%s", r.Body)
	return m
}

func do(t *testing.T, client *http.Client, method, url, token string, body io.Reader, contentType string) *response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

func getJSON(t *testing.T, client *http.Client, url, token string) *response {
	t.Helper()
	return do(t, client, http.MethodGet, url, token, nil, "")
}

func postJSON(t *testing.T, client *http.Client, url, token string, body any) *response {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	return do(t, client, http.MethodPost, url, token, bytes.NewReader(b), "application/json")
}

// pngImage is a w x h PNG.
func pngImage(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

func dataURI(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// multipartUpload is a multipart/form-data upload of a PNG with a title.
func multipartUpload(t *testing.T, data []byte, title string) (io.Reader, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	require.NoError(t, mw.WriteField("title", title))
	fw, err := mw.CreateFormFile("file", "picture.png")
	require.NoError(t, err)
	_, err = fw.Write(data)
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	return &b, mw.FormDataContentType()
}
