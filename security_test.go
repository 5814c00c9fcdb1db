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

// A web page must not drive the control API: not through DNS rebinding (a
// foreign Host), not cross-site (a foreign Origin), not with a bodyless
// POST that needs no preflight.
func TestControlAPIRefusesWebPages(t *testing.T) {
	srv := mediamock.RunT(t)
	json := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		name, method, path, host string
		hdr                      map[string]string
		status                   int
		code                     string
	}{
		{"rebound host reads the snapshot", "GET", "/_mock/snapshot", "evil.example", nil, 403, "forbidden_host"},
		{"rebound host resets", "POST", "/_mock/reset", "evil.example:8080", json, 403, "forbidden_host"},
		{"foreign origin resets", "POST", "/_mock/reset", "", map[string]string{"Content-Type": "application/json", "Origin": "https://evil.example"}, 403, "forbidden_origin"},
		{"null origin resets", "POST", "/_mock/reset", "", map[string]string{"Content-Type": "application/json", "Origin": "null"}, 403, "forbidden_origin"},
		{"bodyless form post resets", "POST", "/_mock/reset", "", nil, 415, "unsupported_media_type"},
		{"text/plain post adds credits", "POST", "/_mock/workspaces/1/credits", "", map[string]string{"Content-Type": "text/plain"}, 415, "unsupported_media_type"},
		{"bodyless delete clears faults", "DELETE", "/_mock/faults", "", nil, 415, "unsupported_media_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := testkit.Send(t, srv, tt.method, tt.path, tt.host, tt.hdr, "")
			assert.Equal(t, tt.status, resp.StatusCode, body)
			assert.Equal(t, tt.code, testkit.ErrorCode(t, body))
			assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), "no permissive CORS")
		})
	}
	// What is allowed: loopback names, the same origin, JSON.
	for _, host := range []string{"", "localhost:8080", "[::1]:8080", "127.0.0.2"} {
		resp, body := testkit.Send(t, srv, "POST", "/_mock/reset", host, map[string]string{"Content-Type": "application/json", "Origin": "http://" + strings.TrimPrefix(srv.URL(), "http://")}, "")
		if host != "" { // the Origin only matches the default host
			resp, body = testkit.Send(t, srv, "POST", "/_mock/reset", host, json, "")
		}
		assert.Equal(t, 200, resp.StatusCode, "%s: %s", host, body)
	}
	resp, _ := testkit.Send(t, srv, "GET", "/_mock/health", "evil.example", nil, "")
	assert.Equal(t, 200, resp.StatusCode, "the health check answers any host")
}

func TestAllowedHostsAndPublicURL(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) {
		o.AllowedHosts = []string{"mediamock"}
		o.PublicURL = "http://mock.ci.internal:8080"
	})
	for _, host := range []string{"mediamock:8080", "mock.ci.internal:8080"} {
		resp, body := testkit.Send(t, srv, "GET", "/_mock/clock", host, nil, "")
		assert.Equal(t, 200, resp.StatusCode, "%s: %s", host, body)
	}
	resp, _ := testkit.Send(t, srv, "GET", "/_mock/clock", "other.example", nil, "")
	assert.Equal(t, 403, resp.StatusCode)
}

// A listener beyond loopback without a control token keeps the state
// (every token included) to itself.
func TestExposedListenerNeedsTokenForSnapshots(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Addr = "0.0.0.0:0" })
	resp, body := testkit.Send(t, srv, "GET", "/_mock/snapshot", "", nil, "")
	assert.Equal(t, 403, resp.StatusCode)
	assert.Equal(t, "control_token_required", testkit.ErrorCode(t, body))
	resp, _ = testkit.Send(t, srv, "PUT", "/_mock/snapshot", "", map[string]string{"Content-Type": "application/octet-stream"}, "x")
	assert.Equal(t, 403, resp.StatusCode)

	guarded := mediamock.RunT(t, func(o *mediamock.Options) { o.Addr = "0.0.0.0:0"; o.ControlToken = "s3cret" })
	resp, _ = testkit.Send(t, guarded, "GET", "/_mock/snapshot", "", map[string]string{"Authorization": "Bearer s3cret"}, "")
	assert.Equal(t, 200, resp.StatusCode)
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

// A corrupted snapshot is refused with 400 invalid_snapshot; the server and
// its state go on as they were.
func TestCorruptedSnapshotsLeaveTheStateAlone(t *testing.T) {
	srv := mediamock.RunT(t)
	resp, snap := testkit.Send(t, srv, "GET", "/_mock/snapshot", "", nil, "")
	require.Equal(t, 200, resp.StatusCode)
	_, before := testkit.Send(t, srv, "GET", "/api/v1/account", "", map[string]string{"Authorization": "Bearer " + mediamock.KeyAllScopes}, "")
	refused := 0
	for i := 0; i < 40; i++ {
		bad := []byte(snap)
		// Flip bytes spread over the pages, a different set each time.
		for j := 0; j < 8; j++ {
			pos := (i*7919 + j*104729) % len(bad)
			bad[pos] ^= byte(0x5a + i + j)
		}
		if i%5 == 0 {
			bad = bad[:len(bad)/(i/5+2)] // and some cut short
		}
		resp, body := testkit.Send(t, srv, "PUT", "/_mock/snapshot", "", map[string]string{"Content-Type": "application/octet-stream"}, string(bad))
		if resp.StatusCode == 200 {
			continue // the flips hit only free space: a sound snapshot
		}
		require.Equal(t, 400, resp.StatusCode, "snapshot %d: %s", i, body)
		assert.Equal(t, "invalid_snapshot", testkit.ErrorCode(t, body))
		refused++
	}
	assert.Greater(t, refused, 20, "most corruptions are caught")
	resp, after := testkit.Send(t, srv, "GET", "/api/v1/account", "", map[string]string{"Authorization": "Bearer " + mediamock.KeyAllScopes}, "")
	require.Equal(t, 200, resp.StatusCode)
	var a, b map[string]any
	require.NoError(t, json.Unmarshal([]byte(before), &a))
	require.NoError(t, json.Unmarshal([]byte(after), &b))
	assert.Equal(t, a["credits_balance"], b["credits_balance"])
	resp, _ = testkit.Send(t, srv, "POST", "/api/v1/generations", "", map[string]string{"Authorization": "Bearer " + mediamock.KeyAllScopes, "Content-Type": "application/json"},
		`{"modality":"image","model_id":"imagen-4","prompt":"still alive"}`)
	assert.Equal(t, 201, resp.StatusCode, "the server still writes")
}
