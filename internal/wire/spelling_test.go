package wire_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

// Every header the spec names goes out spelled as the spec writes it
// (X-RateLimit-Limit, not Go's canonical X-Ratelimit-Limit): HTTP does not
// care, but grep and some clients' header maps do.
func TestHeadersAreSpelledAsTheSpecWritesThem(t *testing.T) {
	srv := mediamock.RunT(t)
	head := func(key, path string) string {
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL(), "http://"))
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, "GET "+mediamock.BasePath+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+key+"\r\nConnection: close\r\n\r\n")
		require.NoError(t, err)
		data, err := io.ReadAll(conn)
		require.NoError(t, err)
		h, _, _ := strings.Cut(string(data), "\r\n\r\n")
		return h
	}
	ok := head(mediamock.KeyAllScopes, "/account")
	require.Contains(t, ok, "HTTP/1.1 200")
	for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Request-Id"} {
		assert.Contains(t, ok, "\r\n"+name+": ", "%s as the spec writes it", name)
	}
	assert.NotContains(t, ok, "X-Ratelimit-", "no canonical spelling besides")

	var limited string
	for i := 0; i < 25 && !strings.HasPrefix(limited, "HTTP/1.1 429"); i++ {
		limited = head(mediamock.KeyFreePlan, "/account")
	}
	require.True(t, strings.HasPrefix(limited, "HTTP/1.1 429"), limited)
	for _, name := range []string{"Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Request-Id"} {
		assert.Contains(t, limited, "\r\n"+name+": ", "%s as the spec writes it", name)
	}

	// A Go client reads them as usual.
	req, _ := http.NewRequest("GET", srv.BaseURL()+"/account", nil)
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "120", resp.Header.Get("X-RateLimit-Limit"))
}
