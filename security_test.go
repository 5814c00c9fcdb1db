package mediamock_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

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

// Idle keep-alive connections are closed after the idle timeout.
func TestIdleConnectionsAreClosed(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.IdleTimeout = 50 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET /_mock/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	require.NoError(t, err)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = r.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the server closed the idle connection before the 5 s deadline")
}

// A body that trickles in is cut off at the read timeout.
func TestTricklingBodiesAreCutOff(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.ReadTimeout = 100 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /api/v1/generations HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+
		mediamock.KeyAllScopes+"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = io.ReadAll(conn) // an answer, then the close; or the close alone
	assert.NoError(t, err, "the server ended the connection before the 5 s deadline")
}

// TestChallengesFollowRFC6750: a refusal for the credential carries the
// Bearer challenge RFC 6750 describes, on REST and MCP alike: no error code
// when no bearer token was sent, invalid_token for an unknown one, and
// insufficient_scope with the scope required for a token without it.
func TestChallengesFollowRFC6750(t *testing.T) {
	srv := mediamock.RunT(t)
	const bare, invalid = `Bearer realm="api"`, `Bearer realm="api", error="invalid_token"`
	mcpInit := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, door := range []struct{ method, path, body string }{
		{"GET", mediamock.BasePath + "/account", ""},
		{"POST", "/mcp", mcpInit},
	} {
		for _, tc := range []struct{ authorization, challenge string }{
			{"", bare},
			{"Basic dXNlcjpwYXNz", bare},
			{"Bearer", bare},
			{"Bearer mk_no_such_key", invalid},
		} {
			header := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
			if tc.authorization != "" {
				header["Authorization"] = tc.authorization
			}
			resp, body := testkit.Send(t, srv, door.method, door.path, "", header, door.body)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s %q: %s", door.path, tc.authorization, body)
			want := tc.challenge
			if door.path == "/mcp" { // MCP clients find the authorization server from here
				want += `, resource_metadata="` + srv.URL() + `/.well-known/oauth-protected-resource/mcp"`
			}
			assert.Equal(t, want, resp.Header.Get("WWW-Authenticate"), "%s %q", door.path, tc.authorization)
		}
	}
	resp, body := testkit.Send(t, srv, "POST", mediamock.BasePath+"/generations", "",
		map[string]string{"Authorization": "Bearer " + mediamock.KeyReadOnly, "Content-Type": "application/json"},
		`{"modality":"image","model_id":"imagen-4","prompt":"a fox"}`)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, body)
	assert.Equal(t, `Bearer realm="api", error="insufficient_scope", scope="generate"`, resp.Header.Get("WWW-Authenticate"))
}
