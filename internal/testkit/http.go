package testkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Server is a server the helpers reach: *mediamock.Server, or a server
// of another process (Remote).
type Server interface {
	// URL is the server's root, without a final slash.
	URL() string
	// BaseURL is the REST API's base URL, ending in /api/v1.
	BaseURL() string
	// Client is an HTTP client that reaches the server.
	Client() *http.Client
}

// Remote is a server reached at an address, such as a server process a
// test started: its client is http.DefaultClient's transport with a
// timeout of Bound.
type Remote string

// URL is the server's root.
func (r Remote) URL() string { return strings.TrimSuffix(string(r), "/") }

// BaseURL is the REST API's base.
func (r Remote) BaseURL() string { return r.URL() + "/api/v1" }

// Client is a client with a timeout of Bound.
func (r Remote) Client() *http.Client { return &http.Client{Timeout: Bound} }

// KeyAllScopes is the default fixture's API key with every scope
// (mediamock.KeyAllScopes, which a test holds it to).
const KeyAllScopes = "mk_test_all_scopes"

// REST sends a request to the server's REST API (path relative to
// /api/v1) with key as the bearer token ("" sends none) and decodes the
// JSON object it answers. body is sent as JSON: a string or []byte as it
// is, nil or "" as no body, any other value encoded. It fails the test when
// the request cannot be made or the answer is not a JSON object.
func REST(t testing.TB, srv Server, key, method, path string, body any) (int, map[string]any, http.Header) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		if b != "" {
			rd = strings.NewReader(b)
		}
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, srv.BaseURL()+path, rd)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out), "%s %s: %s", method, path, data)
	return resp.StatusCode, out, resp.Header
}

// API is REST with the default fixture's all-scopes key, for a test that
// needs only the answer.
func API(t testing.TB, srv Server, method, path string, body any) map[string]any {
	t.Helper()
	_, out, _ := REST(t, srv, KeyAllScopes, method, path, body)
	return out
}

// Send makes a raw request to any path of the server, as a web page or a
// careless client sends it: host, when not empty, replaces the Host header,
// and header adds headers. Redirects are not followed. It returns the
// response (its body closed) and the body read.
func Send(t testing.TB, srv Server, method, path, host string, header map[string]string, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL()+path, strings.NewReader(body))
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return Do(t, srv, req)
}

// Do sends a request to the server without following redirects and
// returns the response (its body closed) and the body read.
func Do(t testing.TB, srv Server, req *http.Request) (*http.Response, string) {
	t.Helper()
	client := srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// JSON decodes a JSON object, failing the test when body is not one.
func JSON[B ~string | ~[]byte](t testing.TB, body B) map[string]any {
	t.Helper()
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &out), "%s", body)
	return out
}

// ErrorCode is error.code of an error body ("" when it has none), failing
// the test when body is not JSON.
func ErrorCode(t testing.TB, body string) string {
	t.Helper()
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	return e.Error.Code
}

// Bearer is an http.RoundTripper that adds Key ("" adds nothing) as a
// bearer token to every request it passes to Base: for a client that sets
// no header of its own, such as an MCP client's transport.
type Bearer struct {
	Key  string
	Base http.RoundTripper
}

// RoundTrip sends a copy of r with the Authorization header set.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.Key != "" {
		r.Header.Set("Authorization", "Bearer "+b.Key)
	}
	return b.Base.RoundTrip(r)
}
