package proxy_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/proxy"
	"github.com/mediamock/mediamock/internal/testkit"
)

// front is a proxy under test, listening on loopback, with its report and
// log kept.
type front struct {
	p      *proxy.Proxy
	srv    *httptest.Server
	report *testkit.SyncBuffer
	log    *testkit.SyncBuffer
}

func startProxy(t *testing.T, upstream string, opts ...func(*proxy.Options)) *front {
	t.Helper()
	f := &front{report: &testkit.SyncBuffer{}, log: &testkit.SyncBuffer{}}
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

// JSON decodes the body, failing the test when it is not a JSON object.
func (r *response) JSON(t *testing.T) map[string]any {
	t.Helper()
	return testkit.JSON(t, r.Body)
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
