package contract_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
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
	// Without a credential there is no workspace: the 401 carries the
	// anonymous window's headers (D-46); an oversized upload is refused
	// for its credential before its size.
	res := e.call(req{method: "POST", path: "/uploads", body: `{"image_url":"` + big + `"}`})
	assert.Equal(t, 401, res.Status)
	assert.Equal(t, "20", res.Header.Get("X-RateLimit-Limit"), "the anonymous window's")
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
	wall := newFakeWall(time.Date(2031, 5, 1, 12, 0, 10, 0, time.UTC))
	e := start(t, func(o *mediamock.Options) {
		o.Clock = mediamock.ClockReal
		o.WallClock = wall.now
	})
	var res *result
	for i := 0; i < 21; i++ {
		res = e.get(keyFree, "/account")
	}
	require.Equal(t, 429, res.Status)
	wait, err := strconv.Atoi(res.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.Positive(t, wait)
	wall.add(time.Duration(wait) * time.Second) // the client sleeps
	assert.Equal(t, 200, e.get(keyFree, "/account").Status)
}

// A client that polls by sleeping sees its job move on a clock that flows.
func TestSleepingPollerSeesProgress(t *testing.T) {
	wall := newFakeWall(time.Date(2031, 5, 1, 12, 0, 0, 0, time.UTC))
	e := start(t, func(o *mediamock.Options) {
		o.Clock = mediamock.ClockReal
		o.WallClock = wall.now
		o.Speed = 10
	})
	g := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "flux-2-pro", "prompt": "a fox"})
	id := g.Assets[0].ID
	status := g.Status
	for i := 0; i < 30 && status != "completed"; i++ {
		wall.add(2 * time.Second) // the client sleeps two seconds between polls
		status = e.generation(keyAll, id).Status
	}
	assert.Equal(t, "completed", status)
}

// "title … present on uploads": an upload without a title gets one.
func TestUploadTitles(t *testing.T) {
	e := start(t)
	png := testkit.PNG(t, 8, 8)
	form, ct := multipartForm(t, formPart{name: "file", filename: "kitchen-counter.png", contentType: "image/png", data: png})
	a := decodeAs[apiAsset](e.call(req{method: "POST", path: "/uploads", token: keyAll, body: form, contentType: ct}).expect(201))
	assert.Equal(t, "kitchen-counter.png", a.Title, "the multipart file name")

	a = decodeAs[apiAsset](e.post(keyAll, "/uploads", map[string]any{"image_url": "https://cdn.example.com/photos/latte%20art.jpg?w=800"}).expect(201))
	assert.Equal(t, "latte art.jpg", a.Title, "the last path segment of the URL")

	a = e.upload(keyAll, png, "image/png", "")
	assert.Equal(t, fmt.Sprintf("Upload %d", a.ID), a.Title, "the stated default for a data URI")

	long := strings.Repeat("é", 200) + ".png"
	form, ct = multipartForm(t, formPart{name: "file", filename: long, contentType: "image/png", data: png})
	a = decodeAs[apiAsset](e.call(req{method: "POST", path: "/uploads", token: keyAll, body: form, contentType: ct}).expect(201))
	assert.Equal(t, 160, utf8.RuneCountInString(a.Title), "trimmed to 160 characters")

	got := decodeAs[apiGeneration](e.get(keyAll, fmt.Sprintf("/assets/%d", a.ID)).expect(200))
	assert.Equal(t, a.Title, got.Assets[0].Title, "kept")
}

// "Reference images per generation: up to 4 (ids and URLs each)".
func TestFourReferenceIDsAndFourURLs(t *testing.T) {
	e := start(t)
	var ids []int64
	for i := 0; i < 5; i++ {
		ids = append(ids, e.uploadPNG(keyAll, 64, 64, "").ID)
	}
	urls := []string{"https://example.com/a.png", "https://example.com/b.png", "https://example.com/c.png", "https://example.com/d.png", "https://example.com/e.png"}
	g := e.generate(keyAll, map[string]any{"modality": "image", "model_id": "flux-2-pro", "prompt": "a fox",
		"reference_asset_ids": ids[:4], "reference_image_urls": urls[:4]})
	assert.NotEmpty(t, g.Assets)

	res := e.post(keyAll, "/generations", map[string]any{"modality": "image", "model_id": "flux-2-pro", "prompt": "a fox",
		"reference_asset_ids": ids, "reference_image_urls": urls[:1]}).expectInvalid("reference_asset_ids")
	assert.Contains(t, violation(t, res, "reference_asset_ids").Reason, "4", "the per-list limit")

	// Within the model's own maximum where the catalog states one.
	res = e.post(keyAll, "/generations", map[string]any{"modality": "image", "model_id": "seedream-4", "prompt": "a fox",
		"reference_asset_ids": ids[:2], "reference_image_urls": urls[:1]}).expectInvalid("reference_asset_ids")
	assert.Contains(t, violation(t, res, "reference_asset_ids").Reason, "at most 2 reference images in all")
}

// An Encore video comes from an effect, not from a model of the catalog:
// it carries no model.
func TestEncoreVideoHasNoModel(t *testing.T) {
	e := start(t)
	photo := e.uploadPNG(keyAll, 600, 800, "")
	c := e.createEncore(keyAll, map[string]any{"effect": "golden-hour", "asset_id": photo.ID})
	a := decodeAs[apiGeneration](e.get(keyAll, fmt.Sprintf("/assets/%d", c.AssetID)).expect(200))
	assert.Empty(t, a.Assets[0].Model)
	assert.NotEmpty(t, a.Assets[0].Title, "the effect's name")
}

// Validation messages name the rule, not a raw regular expression.
func TestPatternViolationsNameTheRule(t *testing.T) {
	e := start(t)
	res := e.post(keyAll, "/generations", map[string]any{"modality": "image", "model_id": "flux-2-pro", "prompt": "a fox", "aspect_ratio": "wide"}).expectInvalid("aspect_ratio")
	assert.Equal(t, "must be width:height in whole numbers, like 16:9", violation(t, res, "aspect_ratio").Reason)
	res = e.post(keyAll, "/uploads", map[string]any{"image_url": "ftp://example.com/a.png"}).expectInvalid("image_url")
	assert.NotContains(t, violation(t, res, "image_url").Reason, "regular expression")
}

// fakeWall is a wall clock the test moves, read by the server's goroutines.
type fakeWall struct{ ns atomic.Int64 }

func newFakeWall(t time.Time) *fakeWall {
	w := &fakeWall{}
	w.ns.Store(t.UnixNano())
	return w
}

func (w *fakeWall) now() time.Time      { return time.Unix(0, w.ns.Load()).UTC() }
func (w *fakeWall) add(d time.Duration) { w.ns.Add(int64(d)) }
