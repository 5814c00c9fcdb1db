package contract_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

// "Every response carries X-RateLimit-Limit, X-RateLimit-Remaining,
// X-RateLimit-Reset": every answer to a request whose key names a
// workspace, whatever the status. Only the operations count.
func TestRateLimitHeadersOnEveryAnswer(t *testing.T) {
	e := start(t)
	before := e.get(keyAll, "/account")
	remaining, _ := strconv.Atoi(before.Header.Get("X-RateLimit-Remaining"))
	big := strings.Repeat("x", 15<<20) // over the JSON upload cap (a 10 MiB image in base64, and a margin)
	tests := []struct {
		name   string
		r      req
		status int
	}{
		{"unknown path", req{method: "GET", path: "/no/such/path", token: keyAll}, 404},
		{"method not allowed", req{method: "DELETE", path: "/account", token: keyAll}, 405},
		{"read-only collection", req{method: "POST", path: "/social/accounts", token: keyAll}, 405},
		{"the OpenAPI document", req{method: "GET", path: "/openapi.json", token: keyAll}, 200},
		{"an upload over the limit", req{method: "POST", path: "/uploads", token: keyAll, body: `{"image_url":"` + big + `"}`}, 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.call(tt.r)
			assert.Equal(t, tt.status, res.Status, "%s", truncate(res.Body))
			assert.Equal(t, "120", res.Header.Get("X-RateLimit-Limit"))
			assert.Equal(t, strconv.Itoa(remaining), res.Header.Get("X-RateLimit-Remaining"), "answers outside the operations do not count")
			assert.NotEmpty(t, res.Header.Get("X-RateLimit-Reset"))
		})
	}
	// Without a credential there is no workspace, so no window; an
	// oversized upload is refused for its credential before its size.
	res := e.call(req{method: "POST", path: "/uploads", body: `{"image_url":"` + big + `"}`})
	assert.Equal(t, 401, res.Status)
	assert.Empty(t, res.Header.Get("X-RateLimit-Limit"))
	// The client saw createUpload answer 413: the coverage says so.
	cov := e.srv.Coverage()
	found := false
	for _, op := range cov.Operations {
		for _, st := range op.Statuses {
			if op.Operation == "createUpload" && st.Status == 413 && st.Count > 0 {
				found = true
			}
		}
	}
	assert.True(t, found, "coverage records createUpload 413")
}

// The HTTP Date follows the simulated clock, so it agrees with
// X-RateLimit-Reset and the timestamps in bodies.
func TestDateFollowsTheSimulatedClock(t *testing.T) {
	e := start(t)
	e.advance(90 * time.Minute)
	res := e.get(keyAll, "/account")
	date, err := http.ParseTime(res.Header.Get("Date"))
	require.NoError(t, err)
	assert.Equal(t, e.now().Truncate(time.Second), date.UTC())
	reset, _ := strconv.ParseInt(res.Header.Get("X-RateLimit-Reset"), 10, 64)
	assert.InDelta(t, float64(date.Unix()), float64(reset), 60, "the window resets within the minute of the Date")
}

// A client that honours Retry-After and sleeps gets through, on a clock that
// flows with (here a fake) wall time.
func TestRetryAfterSleeperGetsThrough(t *testing.T) {
	wall := time.Date(2031, 5, 1, 12, 0, 10, 0, time.UTC)
	e := start(t, func(o *mediamock.Options) {
		o.Clock = mediamock.ClockReal
		o.WallClock = func() time.Time { return wall }
	})
	var res *result
	for i := 0; i < 21; i++ {
		res = e.get(keyFree, "/account")
	}
	require.Equal(t, 429, res.Status)
	wait, err := strconv.Atoi(res.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.Positive(t, wait)
	wall = wall.Add(time.Duration(wait) * time.Second) // the client sleeps
	assert.Equal(t, 200, e.get(keyFree, "/account").Status)
}

// A client that polls by sleeping sees its job move on a clock that flows.
func TestSleepingPollerSeesProgress(t *testing.T) {
	wall := time.Date(2031, 5, 1, 12, 0, 0, 0, time.UTC)
	e := start(t, func(o *mediamock.Options) {
		o.Clock = mediamock.ClockReal
		o.WallClock = func() time.Time { return wall }
		o.Speed = 10
	})
	g := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "flux-2-pro", "prompt": "a fox"})
	id := g.Assets[0].ID
	status := g.Status
	for i := 0; i < 30 && status != "completed"; i++ {
		wall = wall.Add(2 * time.Second) // the client sleeps two seconds between polls
		e.srv.Engine().Settle()
		status = e.generation(keyAll, id).Status
	}
	assert.Equal(t, "completed", status)
}
