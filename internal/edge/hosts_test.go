package edge_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// TestOneHostGuardOnEveryFront holds every front a browser can reach (the
// control API, the dashboard, the event stream, MCP, the files) to the same
// table of Host and Origin cases: one policy, one error.
func TestOneHostGuardOnEveryFront(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) {
		o.AllowedHosts = []string{"mediamock"}
		o.PublicURL = "http://mock.ci.internal:8080"
	})
	// A file the fixture's library holds.
	req, _ := http.NewRequest("GET", srv.BaseURL()+"/assets?status=completed&kind=image&limit=1", nil)
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	var page struct{ Data []struct{ URL string } }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
	resp.Body.Close()
	require.NotEmpty(t, page.Data)
	file, err := url.Parse(page.Data[0].URL)
	require.NoError(t, err)

	fronts := []struct {
		name, method, path, body string
		header                   map[string]string
	}{
		{"control", "GET", "/_mock/clock", "", nil},
		{"dashboard", "GET", "/_mock/ui/", "", nil},
		{"events", "GET", "/_mock/events", "", nil},
		{"mcp", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			map[string]string{"Authorization": "Bearer " + mediamock.KeyAllScopes, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}},
		{"files", "GET", file.Path, "", nil},
	}
	own := strings.TrimPrefix(srv.URL(), "http://")
	cases := []struct {
		name, host, origin, code string // code "" : let through
	}{
		{"the listen address", "", "", ""},
		{"localhost", "localhost:8080", "", ""},
		{"a .localhost name", "app.localhost:8080", "", ""},
		{"IPv6 loopback", "[::1]:8080", "", ""},
		{"an IP address", "10.1.2.3:8080", "", ""},
		{"an allowed host", "mediamock:8080", "", ""},
		{"the public URL's host, in capitals", "MOCK.CI.INTERNAL:8080", "", ""},
		{"a rebound name", "evil.example", "", "forbidden_host"},
		{"a rebound name with a trailing dot", "EVIL.example.:80", "", "forbidden_host"},
		{"the same origin", "", "http://" + own, ""},
		{"a local tool's page", "", "http://localhost:6274", ""},
		{"a page of an allowed host", "", "http://mediamock:3000", ""},
		{"a page of another site", "", "https://evil.example", "forbidden_origin"},
		{"a page served from an IP address", "", "http://10.0.0.7:3000", "forbidden_origin"},
		{"the opaque origin", "", "null", "forbidden_origin"},
		{"a page of another scheme", "", "file://localhost", "forbidden_origin"},
	}
	for _, fr := range fronts {
		for _, tc := range cases {
			t.Run(fr.name+"/"+tc.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				req, err := http.NewRequestWithContext(ctx, fr.method, srv.URL()+fr.path, strings.NewReader(fr.body))
				require.NoError(t, err)
				for k, v := range fr.header {
					req.Header.Set(k, v)
				}
				if tc.host != "" {
					req.Host = tc.host
				}
				if tc.origin != "" {
					req.Header.Set("Origin", tc.origin)
				}
				resp, err := srv.Client().Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				if tc.code == "" {
					assert.Equal(t, http.StatusOK, resp.StatusCode)
					return // the event stream goes on: the status is enough
				}
				body, _ := io.ReadAll(resp.Body)
				assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
				assert.Equal(t, tc.code, testkit.ErrorCode(t, string(body)))
				assert.Contains(t, string(body), "--allowed-hosts", "one error, saying what to do")
			})
		}
	}
}

// TestGuardHoldsOnAnyConnection: the host guard judges the request, not
// the connection it came on: from a non-loopback address (a container's
// published port), /mcp and the control API refuse a rebound Host and a
// foreign page alike.
func TestGuardHoldsOnAnyConnection(t *testing.T) {
	srv := mediamock.RunT(t)
	for _, path := range []string{"/mcp", "/_mock/clock"} {
		for _, tc := range []struct{ host, origin, code string }{
			{"evil.example", "http://evil.example", "forbidden_host"},
			{"10.1.2.3:8080", "http://evil.example", "forbidden_origin"},
		} {
			method, body := "GET", ""
			if path == "/mcp" {
				method, body = "POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
			}
			req := httptest.NewRequest(method, "http://"+tc.host+path, strings.NewReader(body))
			req.RemoteAddr = "203.0.113.7:41234"
			req.Header.Set("Origin", tc.origin)
			req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, req)
			assert.Equal(t, http.StatusForbidden, rec.Code, "%s from %s: %s", path, tc.host, rec.Body)
			assert.Equal(t, tc.code, testkit.ErrorCode(t, rec.Body.String()), path)
		}
	}
}
