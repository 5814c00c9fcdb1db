package contract_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

func TestOpenAPIDocumentIsServedWithoutAuth(t *testing.T) {
	e := startShared(t)
	res := e.call(req{method: http.MethodGet, path: "/openapi.json"}).expect(http.StatusOK)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	assert.True(t, bytes.Equal(mediamock.OpenAPIDocument, res.Body), "the same bytes as openapi.json")
	doc := res.JSON()
	assert.Equal(t, "3.0.3", doc["openapi"])
	assert.Equal(t, "1.0.0", jsonPath(doc, "info", "version"))
	assert.Empty(t, res.Header.Get("X-RateLimit-Limit"), "not rate limited")
}

func TestAuthentication(t *testing.T) {
	e := startShared(t)
	tests := []struct {
		name, header, code string
	}{
		{"missing header", "", "missing_credentials"},
		{"not bearer", "Basic bWs6dGVzdA==", "invalid_credentials"},
		{"empty token", "Bearer ", "invalid_credentials"},
		{"token with spaces", "Bearer a b", "invalid_credentials"},
		{"unknown token", "Bearer mk_test_nobody", "invalid_credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{}
			if tt.header != "" {
				h["Authorization"] = tt.header
			}
			res := e.call(req{method: http.MethodGet, path: "/account", header: h}).expect(http.StatusUnauthorized, tt.code)
			assert.Contains(t, res.Header.Get("WWW-Authenticate"), "Bearer")
		})
	}
	t.Run("bearer is case-insensitive", func(t *testing.T) {
		e.call(req{method: http.MethodGet, path: "/account", header: map[string]string{"Authorization": "bearer " + keyAll}}).expect(http.StatusOK)
	})
	t.Run("oauth access token", func(t *testing.T) {
		acct := e.get(tokenOAuth, "/account").expect(http.StatusOK).JSON()
		assert.Equal(t, "oauth", acct["token_type"])
		assert.Equal(t, []any{"read", "publish"}, acct["scopes"])
	})
}

func TestScopes(t *testing.T) {
	e := startShared(t)
	tests := []struct {
		token, method, path string
		body                any
		scope               string
	}{
		{keyPublish, http.MethodGet, "/account", nil, "read"},
		{keyGenerate, http.MethodGet, "/assets", nil, "read"},
		{keyRead, http.MethodPost, "/generations", map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "x"}, "generate"},
		{keyRead, http.MethodPost, "/uploads", map[string]any{"image_url": "https://example.com/a.jpg"}, "generate"},
		{keyPublish, http.MethodPost, "/encore/creations", map[string]any{"effect": "golden-hour", "asset_id": 1}, "generate"},
		{keyGenerate, http.MethodPost, "/social/publications", map[string]any{"asset_ids": []int{1}, "caption": "x", "platforms": []string{"instagram"}}, "publish"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			res := e.call(req{method: tt.method, path: tt.path, token: tt.token, body: tt.body}).expect(http.StatusForbidden, "insufficient_scope")
			details := res.JSON()["error"].(map[string]any)["details"].(map[string]any)
			assert.Equal(t, tt.scope, details["required_scope"])
			assert.NotEmpty(t, res.Header.Get("X-RateLimit-Remaining"), "403 still carries rate-limit headers")
		})
	}
}

func TestUnknownPathAndWrongMethod(t *testing.T) {
	e := startShared(t)
	e.get(keyAll, "/nothing-here").expect(http.StatusNotFound, "not_found")
	e.get(keyAll, "/generations/1/extra").expect(http.StatusNotFound, "not_found")
	res := e.call(req{method: http.MethodDelete, path: "/assets/1", token: keyAll}).expect(http.StatusMethodNotAllowed, "method_not_allowed")
	assert.Equal(t, "GET", res.Header.Get("Allow"))
	res = e.call(req{method: http.MethodPut, path: "/social/publications", token: keyAll}).expect(http.StatusMethodNotAllowed, "method_not_allowed")
	assert.Equal(t, "GET, POST", res.Header.Get("Allow"))
}

func TestValidationListsEveryViolation(t *testing.T) {
	e := startShared(t)
	res := e.post(keyAll, "/generations", map[string]any{
		"modality": "painting", "model_id": "", "prompt": strings.Repeat("x", 5001), "count": 9,
		"wait_seconds": 56, "reference_asset_ids": []int{1, 2, 3, 4, 5}, "colour": "red",
	}).expect(http.StatusBadRequest, "validation_failed")
	assert.ElementsMatch(t, []string{"modality", "model_id", "prompt", "count", "wait_seconds", "reference_asset_ids", "colour"}, res.Fields())
	for _, v := range res.Violations() {
		assert.Equal(t, "body", v.In)
		assert.NotEmpty(t, v.Reason)
		if v.Field == "modality" {
			assert.ElementsMatch(t, modalityNames(), v.Allowed)
		}
	}

	res = e.get(keyAll, "/assets?limit=51&status=done&starting_after=0&project_id=x").expect(http.StatusBadRequest, "validation_failed")
	assert.ElementsMatch(t, []string{"limit", "status", "starting_after", "project_id"}, res.Fields())
	for _, v := range res.Violations() {
		assert.Equal(t, "query", v.In)
	}
	res = e.get(keyAll, "/generations/abc?wait_seconds=-1").expect(http.StatusBadRequest, "validation_failed")
	assert.ElementsMatch(t, []string{"id", "wait_seconds"}, res.Fields())

	res = e.post(keyAll, "/social/publications", map[string]any{"asset_ids": []int{}, "caption": strings.Repeat("#", 2201), "options": map[string]any{"youtube_format": "long", "title": strings.Repeat("t", 101), "extra": true}}).
		expect(http.StatusBadRequest, "validation_failed")
	assert.ElementsMatch(t, []string{"", "asset_ids", "caption", "options.youtube_format", "options.title", "options.extra"}, res.Fields(),
		"the oneOf rule of the targets and every other violation")
}

func TestMalformedBodies(t *testing.T) {
	e := startShared(t)
	e.call(req{method: http.MethodPost, path: "/generations", token: keyAll, body: []byte(`{"modality": "image",`)}).expect(http.StatusBadRequest, "invalid_json")
	e.call(req{method: http.MethodPost, path: "/generations", token: keyAll, body: []byte(`[1,2]`)}).expect(http.StatusBadRequest, "validation_failed")
	e.call(req{method: http.MethodPost, path: "/generations", token: keyAll}).expect(http.StatusBadRequest, "validation_failed")
	res := e.call(req{method: http.MethodPost, path: "/generations", token: keyAll, body: []byte(`{}`), contentType: "text/plain"}).
		expect(http.StatusUnsupportedMediaType, "unsupported_media_type")
	assert.Contains(t, string(res.Body), "application/json")
}

func TestBodyOverTheCapIsRefusedWithoutReadingIt(t *testing.T) {
	e := start(t, func(o *mediamock.Options) { o.MaxBodyBytes = 1 << 10 })
	big := `{"modality":"image","model_id":"imagen-4","prompt":"` + strings.Repeat("x", 4000) + `"}`
	e.call(req{method: http.MethodPost, path: "/generations", token: keyAll, body: big}).expect(http.StatusRequestEntityTooLarge, "payload_too_large")

	// Without a Content-Length the cap applies while reading.
	r, w := io.Pipe()
	go func() {
		w.Write([]byte(big))
		w.Close()
	}()
	hr, err := http.NewRequest(http.MethodPost, e.root+"/api/v1/generations", r)
	require.NoError(t, err)
	hr.Header.Set("Authorization", "Bearer "+keyAll)
	hr.Header.Set("Content-Type", "application/json")
	resp, err := e.client.Do(hr)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
}

func TestRateLimitHeadersAndWindow(t *testing.T) {
	e := start(t)
	var last *result
	for i := 1; i <= 20; i++ {
		last = e.get(keyFree, "/account").expect(http.StatusOK)
		assert.Equal(t, "20", last.Header.Get("X-RateLimit-Limit"))
		assert.Equal(t, strconv.Itoa(20-i), last.Header.Get("X-RateLimit-Remaining"))
	}
	reset, err := strconv.ParseInt(last.Header.Get("X-RateLimit-Reset"), 10, 64)
	require.NoError(t, err)
	now := e.srv.Now()
	assert.Equal(t, now.Truncate(time.Minute).Add(time.Minute).Unix(), reset, "the end of the current minute")

	res := e.get(keyFree, "/models").expect(http.StatusTooManyRequests, "rate_limited")
	assert.Equal(t, "0", res.Header.Get("X-RateLimit-Remaining"))
	retry, err := strconv.Atoi(res.Header.Get("Retry-After"))
	require.NoError(t, err)
	assert.Equal(t, int(reset-now.Unix()), retry)
	// Errors count too, and every response of the workspace says so.
	e.post(keyFree, "/generations", map[string]any{}).expect(http.StatusTooManyRequests)
	// Another workspace has its own window.
	e.get(keyAll, "/account").expect(http.StatusOK)
	// Unauthenticated requests count in the anonymous window (D-46), whose
	// headers their 401 carries, never in a workspace's.
	res = e.call(req{method: http.MethodGet, path: "/account"}).expect(http.StatusUnauthorized)
	assert.Equal(t, "20", res.Header.Get("X-RateLimit-Limit"))

	e.advance(time.Duration(retry) * time.Second)
	res = e.get(keyFree, "/account").expect(http.StatusOK)
	assert.Equal(t, "19", res.Header.Get("X-RateLimit-Remaining"))
}

func TestHigherPlanLimits(t *testing.T) {
	e := startShared(t)
	res := e.get(keyBusiness, "/account").expect(http.StatusOK)
	assert.Equal(t, "600", res.Header.Get("X-RateLimit-Limit"))
	assert.EqualValues(t, 600, res.JSON()["rate_limit_per_minute"])
	res = e.get(keyAll, "/account").expect(http.StatusOK)
	assert.Equal(t, "120", res.Header.Get("X-RateLimit-Limit"))
}

func TestStrictModePassesEveryOperation(t *testing.T) {
	e := start(t, func(o *mediamock.Options) { o.Strict = true })
	for _, path := range []string{"/account", "/models", "/models?modality=audio&track=music", "/assets", "/encore/effects", "/characters", "/brand_kits", "/projects", "/social/accounts", "/social/publications"} {
		e.get(keyAll, path).expect(http.StatusOK)
	}
	e.get(keyAll, "/assets/999999").expect(http.StatusNotFound)
}
