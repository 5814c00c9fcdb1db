package contract_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/contract"
)

var service = sync.OnceValues(func() (*contract.Contract, error) {
	data, err := os.ReadFile("../../openapi.json")
	if err != nil {
		return nil, err
	}
	return contract.Parse("openapi.json", data)
})

func api(t *testing.T) *contract.Contract {
	t.Helper()
	c, err := service()
	require.NoError(t, err)
	return c
}

func TestFindOperation(t *testing.T) {
	c := api(t)
	for _, tc := range []struct {
		method, target, op string
		vars               map[string]string
	}{
		{"GET", "http://example.com/api/v1/account", "getAccount", map[string]string{}},
		{"GET", "/api/v1/assets/42?wait_seconds=3", "getAsset", map[string]string{"id": "42"}},
		{"POST", "/api/v1/generations", "createGeneration", map[string]string{}},
		{"GET", "/api/v1/social/publications/7", "getPublication", map[string]string{"id": "7"}},
	} {
		op, vars, err := c.FindOperation(httptest.NewRequest(tc.method, tc.target, nil))
		require.NoError(t, err, tc.target)
		assert.Equal(t, tc.op, op)
		assert.Equal(t, tc.vars, vars)
	}
	for _, target := range []string{"/api/v1/nothing", "/account", "/files/x.png"} {
		_, _, err := c.FindOperation(httptest.NewRequest("GET", target, nil))
		assert.ErrorIs(t, err, contract.ErrNoOperation, target)
	}
	_, _, err := c.FindOperation(httptest.NewRequest("DELETE", "/api/v1/account", nil))
	assert.ErrorIs(t, err, contract.ErrNoOperation)
}

func rateHeaders() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-RateLimit-Limit", "120")
	h.Set("X-RateLimit-Remaining", "119")
	h.Set("X-RateLimit-Reset", "1767225660")
	return h
}

const asset = `{"id": 7, "object": "asset", "kind": "image", "status": "completed", "credits": 8, "created_at": "2026-01-05T09:00:00Z"}`

func TestExchangeFindings(t *testing.T) {
	c := api(t)
	get := httptest.NewRequest("GET", "/api/v1/assets/7", nil)
	noLimit := rateHeaders()
	noLimit.Del("X-RateLimit-Limit")
	for _, tc := range []struct {
		name   string
		status int
		header http.Header
		body   string
		want   []contract.Finding
	}{
		{"conforming", 200, rateHeaders(), `{"object": "generation", "status": "completed", "assets": [` + asset + `]}`, nil},
		{"a header missing does not hide the body", 200, noLimit, `{"object": "generation", "status": "completed", "assets": [{"id": "7", "object": "asset", "kind": "image", "status": "completed", "created_at": "2026-01-05T09:00:00Z"}]}`,
			[]contract.Finding{
				{In: "header", Name: "X-RateLimit-Limit"},
				{In: "body", Name: "$.assets[0].id", Keyword: "type", Pointer: []string{"assets", "0", "id"}},
				{In: "body", Name: "$.assets[0].credits", Keyword: "required", Pointer: []string{"assets", "0", "credits"}},
			}},
		{"undeclared status", 418, rateHeaders(), `{}`, []contract.Finding{{In: "status"}}},
		{"not JSON", 200, http.Header{"Content-Type": {"text/html"}, "X-RateLimit-Limit": {"1"}, "X-RateLimit-Remaining": {"1"}, "X-RateLimit-Reset": {"1"}}, `<html>`,
			[]contract.Finding{{In: "content_type", Name: "Content-Type"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.ExchangeFindings(get, tc.status, tc.header, []byte(tc.body))
			require.NoError(t, err)
			for i := range got {
				assert.NotEmpty(t, got[i].Reason)
				got[i].Reason = ""
			}
			assert.ElementsMatch(t, tc.want, got)
		})
	}
	_, err := c.ExchangeFindings(httptest.NewRequest("GET", "/api/v1/nothing", nil), 404, nil, nil)
	assert.ErrorIs(t, err, contract.ErrNoOperation)
}

func TestJSONPath(t *testing.T) {
	assert.Equal(t, "$", contract.JSONPath(nil))
	assert.Equal(t, "$.assets[0].credits", contract.JSONPath([]string{"assets", "0", "credits"}))
	assert.Equal(t, "$[2].id", contract.JSONPath([]string{"2", "id"}))
}
