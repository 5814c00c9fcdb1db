package oauth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mediamock/mediamock/internal/edge"
)

// /oauth/* is rate limited per client address on the wall clock: past the
// limit, 429 rate_limited with Retry-After; another address, or the next
// minute, is served.
func TestOAuthIsRateLimited(t *testing.T) {
	r := newRig(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.env.WallClock = func() time.Time { return now }
	r.s.RateLimit = 5
	send := func(addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", RevokePath, strings.NewReader("token=x&client_id=nobody"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Host, req.RemoteAddr = "localhost", addr+":1234"
		rec := httptest.NewRecorder()
		r.env.Serve(rec, req, edge.Door{Front: "oauth"}, r.s.Serve)
		return rec
	}
	for range 5 {
		assert.Equal(t, http.StatusUnauthorized, send("192.0.2.9").Code, "an unknown client, but served")
	}
	now = now.Add(20 * time.Second)
	rec := send("192.0.2.9")
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Equal(t, "40", rec.Header().Get("Retry-After"))
	assert.Equal(t, "rate_limited", oauthAnswer(t, rec)["error"])
	assert.Equal(t, http.StatusUnauthorized, send("192.0.2.10").Code, "another address")
	assert.Equal(t, http.StatusOK, r.do("GET", ServerMetadataPath, nil, nil).Code, "metadata is not limited")
	now = now.Add(40 * time.Second)
	assert.Equal(t, http.StatusUnauthorized, send("192.0.2.9").Code, "the next minute")
}
