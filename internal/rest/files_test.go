package rest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// firstImage is the address of the first finished image of workspace 1.
func firstImage(t *testing.T, srv *mediamock.Server) string {
	t.Helper()
	auth := map[string]string{"Authorization": "Bearer " + mediamock.KeyAllScopes}
	_, body := testkit.Send(t, srv, "GET", "/api/v1/assets?status=completed&kind=image&limit=1", "", auth, "")
	var page struct {
		Data []struct{ URL string } `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.NotEmpty(t, page.Data)
	return page.Data[0].URL
}

// A file has one address: another spelling of it (a leading zero, an
// encoded slash, another extension) is 404 in the service's error object,
// not the same file.
func TestFileAddressesHaveOneSpelling(t *testing.T) {
	srv := mediamock.RunT(t)
	path := strings.TrimPrefix(firstImage(t, srv), srv.URL())
	parts := strings.Split(strings.TrimPrefix(path, "/files/"), "/") // class, ws, id, token.ext
	require.Len(t, parts, 4, path)
	token, ext, ok := strings.Cut(parts[3], ".")
	require.True(t, ok, path)
	ext = "." + ext
	resp, _ := testkit.Send(t, srv, "GET", path, "", nil, "")
	require.Equal(t, http.StatusOK, resp.StatusCode, path)
	for name, other := range map[string]string{
		"leading zero in the id":        "/files/" + parts[0] + "/" + parts[1] + "/0" + parts[2] + "/" + parts[3],
		"leading zero in the workspace": "/files/" + parts[0] + "/0" + parts[1] + "/" + parts[2] + "/" + parts[3],
		"plus sign":                     "/files/" + parts[0] + "/+" + parts[1] + "/" + parts[2] + "/" + parts[3],
		"encoded slash":                 "/files/" + parts[0] + "%2f" + parts[1] + "/" + parts[2] + "/" + parts[3],
		"encoded slash, upper case":     "/files/" + parts[0] + "/" + parts[1] + "/" + parts[2] + "%2F" + parts[3],
		"another extension":             "/files/" + parts[0] + "/" + parts[1] + "/" + parts[2] + "/" + token + ".gif",
		"an upper-case extension":       "/files/" + parts[0] + "/" + parts[1] + "/" + parts[2] + "/" + token + strings.ToUpper(ext),
		"no extension":                  "/files/" + parts[0] + "/" + parts[1] + "/" + parts[2] + "/" + token,
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := testkit.Send(t, srv, "GET", other, "", nil, "")
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, other)
			assert.Equal(t, "not_found", testkit.ErrorCode(t, body), body)
		})
	}
}

// A range no byte of the file satisfies, a zero-length suffix (bytes=-0)
// included, is 416 with Content-Range: bytes */size and the service's
// error object; satisfiable ones are 206.
func TestUnsatisfiableRanges(t *testing.T) {
	srv := mediamock.RunT(t)
	path := strings.TrimPrefix(firstImage(t, srv), srv.URL())
	resp, full := testkit.Send(t, srv, "GET", path, "", nil, "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	size := strconv.Itoa(len(full))
	for _, tc := range []struct {
		rng    string
		status int
	}{
		{"bytes=-0", http.StatusRequestedRangeNotSatisfiable},
		{"bytes=-00", http.StatusRequestedRangeNotSatisfiable},
		{"bytes=" + size + "-", http.StatusRequestedRangeNotSatisfiable},
		{"bytes=" + size + "-" + size + "0", http.StatusRequestedRangeNotSatisfiable},
		{"bytes=-0, " + size + "-", http.StatusRequestedRangeNotSatisfiable},
		{"bytes=-1", http.StatusPartialContent},
		{"bytes=0-0", http.StatusPartialContent},
		{"bytes=-0, 0-0", http.StatusPartialContent},
	} {
		t.Run(tc.rng, func(t *testing.T) {
			resp, body := testkit.Send(t, srv, "GET", path, "", map[string]string{"Range": tc.rng}, "")
			assert.Equal(t, tc.status, resp.StatusCode, body)
			if tc.status == http.StatusRequestedRangeNotSatisfiable {
				assert.Equal(t, "bytes */"+size, resp.Header.Get("Content-Range"))
				assert.Equal(t, "range_not_satisfiable", testkit.ErrorCode(t, body), body)
			}
		})
	}
}

// The signatures of expiring file addresses are keyed by a random key of
// the server (or by --file-secret), never by the seed: two servers of one
// seed sign differently, two of one file secret alike.
func TestFileSignaturesAreNotSeeded(t *testing.T) {
	signature := func(secret string) string {
		srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock, o.FileSecret = mediamock.ClockManual, secret })
		_, err := srv.AddFault(mediamock.FaultSpec{Kind: "file_expiry", TTLSeconds: new(int64(3600))})
		require.NoError(t, err)
		u, err := url.Parse(firstImage(t, srv))
		require.NoError(t, err)
		sig := u.Query().Get("signature")
		require.NotEmpty(t, sig, "%s", u)
		resp, body := testkit.Send(t, srv, "GET", u.RequestURI(), "", nil, "")
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		q := u.Query()
		q.Set("signature", strings.Repeat("0", len(sig)))
		u.RawQuery = q.Encode()
		resp, _ = testkit.Send(t, srv, "GET", u.RequestURI(), "", nil, "")
		require.NotEqual(t, http.StatusOK, resp.StatusCode, "a forged signature is refused")
		return sig
	}
	assert.NotEqual(t, signature(""), signature(""), "a random key per server")
	assert.Equal(t, signature("shared secret"), signature("shared secret"), "a key from the file secret")
	assert.NotEqual(t, signature("shared secret"), signature("another secret"))
}

// Addresses are never built from a Host the server does not trust, and a
// file is revalidated against a hash of its content, never cached for good.
func TestFileAddressesAndCaching(t *testing.T) {
	srv := mediamock.RunT(t)
	auth := map[string]string{"Authorization": "Bearer " + mediamock.KeyAllScopes}
	_, body := testkit.Send(t, srv, "GET", "/api/v1/assets?status=completed&kind=image&limit=1", "evil.example", auth, "")
	var page struct {
		Data []struct{ URL string } `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.NotEmpty(t, page.Data)
	url := page.Data[0].URL
	assert.True(t, strings.HasPrefix(url, srv.URL()+"/files/"), "built from the listen address, not the Host: %s", url)

	resp, err := srv.Client().Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	etag := resp.Header.Get("ETag")
	assert.Regexp(t, `^"[0-9a-f]{32}"$`, etag, "a hash of the content")
	assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
	assert.NotContains(t, resp.Header.Get("Cache-Control"), "immutable")
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("If-None-Match", etag)
	resp, err = srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)

	secret := mediamock.RunT(t, func(o *mediamock.Options) { o.FileSecret = "not-from-the-seed" })
	_, body = testkit.Send(t, secret, "GET", "/api/v1/assets?status=completed&kind=image&limit=1", "", auth, "")
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	other := strings.TrimPrefix(page.Data[0].URL, secret.URL())
	assert.NotEqual(t, strings.TrimPrefix(url, srv.URL()), other, "a secret moves the addresses")
}

// Every answer under /files/ forbids content sniffing: an upload's bytes
// are taken as its Content-Type says, whatever they hold.
func TestFilesAreNeverSniffed(t *testing.T) {
	srv := mediamock.RunT(t)
	auth := map[string]string{"Authorization": "Bearer " + mediamock.KeyAllScopes}
	_, body := testkit.Send(t, srv, "GET", "/api/v1/assets?status=completed&kind=image&limit=1", "", auth, "")
	var page struct {
		Data []struct{ URL string } `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.NotEmpty(t, page.Data)
	path := strings.TrimPrefix(page.Data[0].URL, srv.URL())
	for _, c := range []struct {
		method, path string
		header       map[string]string
		status       int
	}{
		{"GET", path, nil, 200},
		{"HEAD", path, nil, 200},
		{"GET", path + "?download=1", nil, 200},
		{"GET", path, map[string]string{"Range": "bytes=0-9"}, 206},
		{"GET", "/files/no-such-file", nil, 404},
		{"POST", path, nil, 405},
	} {
		resp, _ := testkit.Send(t, srv, c.method, c.path, "", c.header, "")
		assert.Equal(t, c.status, resp.StatusCode, "%s %s", c.method, c.path)
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), "%s %s %v", c.method, c.path, c.header)
	}
}
