package check_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/contract"
)

var api = sync.OnceValues(func() (*contract.Contract, error) {
	return contract.Parse("openapi.json", mediamock.OpenAPIDocument)
})

func newChecker(t *testing.T) *check.Checker {
	t.Helper()
	c, err := api()
	require.NoError(t, err)
	return check.New(c)
}

// call is an exchange for the checker, started with begin and ended with
// end, so that a test can interleave them.
type call struct {
	k       *check.Checker
	p       *check.Pending
	method  string
	u       *url.URL
	token   string
	reqBody string
}

func begin(k *check.Checker, token, method, target, body string) *call {
	u, _ := url.Parse("/api/v1" + target)
	auth := ""
	if token != "" {
		auth = "Bearer " + token
	}
	return &call{k: k, p: k.Begin(method, u, auth), method: method, u: u, token: token, reqBody: body}
}

func (c *call) end(status int, body string, header ...string) []string {
	h := http.Header{"Content-Type": {"application/json"}}
	if status != http.StatusUnauthorized {
		h.Set("X-RateLimit-Limit", "120")
		h.Set("X-RateLimit-Remaining", "119")
		h.Set("X-RateLimit-Reset", "1767225660")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			h.Del(header[i])
		} else {
			h.Set(header[i], header[i+1])
		}
	}
	rh := http.Header{}
	if c.token != "" {
		rh.Set("Authorization", "Bearer "+c.token)
	}
	if c.reqBody != "" {
		rh.Set("Content-Type", "application/json")
	}
	res := c.k.Finish(c.p, &check.Exchange{Method: c.method, URL: c.u, Header: rh, Body: []byte(c.reqBody),
		Status: status, ResponseHeader: h, ResponseBody: []byte(body)})
	var out []string
	for _, v := range res.Violations {
		out = append(out, v.Rule+" "+v.Path)
	}
	for _, d := range res.Drift {
		out = append(out, "drift."+d.Kind+" "+d.Path)
	}
	return out
}

func account(ws, balance int) string {
	return fmt.Sprintf(`{"object": "account", "workspace_id": %d, "workspace_name": "W", "plan": "pro", "credits_balance": %d, "rate_limit_per_minute": 120,
		"scopes": ["read", "generate", "publish"], "token_type": "api_key", "publishing_allowed": true, "monthly_gifts": []}`, ws, balance)
}

func asset(id int, status string) string {
	return fmt.Sprintf(`{"id": %d, "object": "asset", "kind": "image", "status": "%s", "model": "imagen-4", "credits": 8, "created_at": "2026-01-05T09:00:00Z"}`, id, status)
}

func created(id, charged, balance int) string {
	return fmt.Sprintf(`{"object": "generation", "status": "queued", "assets": [%s], "credits_charged": %d, "credits_balance": %d, "covered_by_monthly_gift": false}`,
		asset(id, "queued"), charged, balance)
}

func generation(id int, status string) string {
	return fmt.Sprintf(`{"object": "generation", "status": "%s", "assets": [%s]}`, status, asset(id, status))
}

func brandKit(id int) string {
	return fmt.Sprintf(`{"id": %d, "object": "brand_kit", "name": "k", "niche": "n", "tone": "t", "target_audience": "a", "instructions": "i", "colors": [], "fonts": {"heading": "h", "body": "b"}}`, id)
}

const genBody = `{"modality": "image", "model_id": "imagen-4", "prompt": "p"}`

func applied(k *check.Checker, rule string) int { return k.Stats()[rule].Applied }

func TestStatelessRules(t *testing.T) {
	k := newChecker(t)
	key := "mk_a_key_0001"
	for _, tc := range []struct {
		name                string
		token, method, path string
		reqBody             string
		status              int
		body                string
		header              []string
		want                []string
	}{
		{"a 401 carries no rate-limit headers", key, "GET", "/account", "", 401, `{"error": {"code": "invalid_credentials", "message": "no"}}`, nil, nil},
		{"an unknown path of an unknown credential", "mk_unknown_0003", "GET", "/nothing", "", 404, `{"error": {"code": "not_found", "message": "no"}}`, []string{"X-RateLimit-Limit", ""}, nil},
		{"accepted credential", key, "GET", "/account", "", 200, account(1, 5), nil, nil},
		{"an unknown path of an accepted credential", key, "GET", "/nothing", "", 404, `{"error": {"code": "not_found", "message": "no"}}`, []string{"X-RateLimit-Reset", ""},
			[]string{"ratelimit.headers headers.X-RateLimit-Reset"}},
		{"an unknown path answered 200", key, "GET", "/nothing", "", 200, `{}`, nil, []string{"openapi.operation status"}},
		{"remaining above the limit", key, "GET", "/account", "", 200, account(1, 5), []string{"X-RateLimit-Remaining", "500"},
			[]string{"ratelimit.headers headers.X-RateLimit-Remaining"}},
		{"429 with a bad Retry-After", key, "GET", "/account", "", 429, `{"error": {"code": "rate_limited", "message": "slow"}}`, []string{"Retry-After", "soon"},
			[]string{"ratelimit.retry_after headers.Retry-After"}},
		{"error code empty", key, "GET", "/assets/3", "", 404, `{"error": {"code": "", "message": "no"}}`, nil, []string{"error.object $.error.code"}},
		{"an error that is not JSON", key, "GET", "/assets/3", "", 500, `<html>oops</html>`, []string{"Content-Type", "text/html"}, []string{"error.object $"}},
		{"an undeclared error status is drift", key, "GET", "/account", "", 418, `{"error": {"code": "teapot", "message": "no"}}`, nil, []string{"drift.status status"}},
		{"an undeclared error status still needs the error object", key, "GET", "/account", "", 418, `{"message": "no"}`, nil, []string{"error.object $.error", "drift.status status"}},
		{"a success other than the one declared", key, "POST", "/generations", genBody, 200, created(31, 0, 5), nil, []string{"openapi.status status"}},
		{"an undeclared field", key, "GET", "/assets/3", "", 200, strings.Replace(generation(3, "completed"), `"credits": 8`, `"credits": 8, "seed": 42`, 1), nil,
			[]string{"drift.field $.assets[0].seed"}},
		{"an undeclared enum value", key, "GET", "/assets/3", "", 200, strings.Replace(generation(3, "completed"), `"kind": "image"`, `"kind": "hologram"`, 1), nil,
			[]string{"drift.enum $.assets[0].kind"}},
		{"an undeclared header", key, "GET", "/account", "", 200, account(1, 5), []string{"X-Trace-Id", "t-1", "Server", "edge", "Access-Control-Allow-Origin", "*"},
			[]string{"drift.header headers.X-Trace-Id"}},
		{"a field of a free-form map is declared", key, "GET", "/assets/3", "", 400, `{"error": {"code": "validation_failed", "message": "no", "details": {"anything": [1]}}}`, nil, nil},
		{"an invalid request served", key, "POST", "/generations", `{"modality": "image", "model_id": "imagen-4", "prompt": "p", "count": 9}`, 201, created(30, 5, 0), nil,
			[]string{"openapi.request request.body.count"}},
		{"an invalid request refused", key, "POST", "/generations", `{"modality": "image", "model_id": "imagen-4", "prompt": "p", "count": 9}`, 400,
			`{"error": {"code": "validation_failed", "message": "no"}}`, nil, nil},
		{"a page after its cursor", key, "GET", "/assets?starting_after=4", "", 200,
			`{"object": "list", "data": [` + asset(5, "completed") + `, ` + asset(3, "completed") + `], "has_more": true}`, nil,
			[]string{"list.cursor $.data[0].id", "list.cursor $.next_cursor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, begin(k, tc.token, tc.method, tc.path, tc.reqBody).end(tc.status, tc.body, tc.header...))
		})
	}
}

// What clients meet in production is declared, not drift: a creation the
// service's moderation refuses (422 content_moderated, D-41), a generation
// completed with failed outputs (D-42), a delivery to a disconnected
// account in a partially published publication and the account that then
// reads publishable false (D-43). A 422 where the document declares none
// is drift, so the check does look.
func TestSurprisesAreDeclared(t *testing.T) {
	const key = "mk_test_all_scopes"
	moderated := `{"error": {"code": "content_moderated", "message": "The prompt was blocked by the service's content moderation; nothing was created or charged."}}`
	failed := `{"id": 8, "object": "asset", "kind": "image", "status": "failed", "model": "imagen-4", "credits": 0, "created_at": "2026-01-05T09:00:00Z",
		"error": {"code": "output_failed", "message": "This output failed; its credits were refunded."}}`
	delivery := func(id int, platform, status, extra string) string {
		return fmt.Sprintf(`{"social_account_id": %d, "platform": "%s", "handle": "@acme", "status": "%s"%s}`, id, platform, status, extra)
	}
	pub := `{"id": 3, "object": "publication", "status": "partially_published", "caption": "c", "asset_ids": [7], "media_type": "carousel",
		"created_at": "2026-01-05T09:00:00+00:00", "published_at": "2026-01-05T09:00:06+00:00", "deliveries": [` +
		delivery(1, "instagram", "failed", `, "error": {"code": "account_disconnected", "message": "The Instagram account @acme is disconnected; reconnect it in the app."}`) + `, ` +
		delivery(4, "linkedin", "published", `, "post_url": "https://linkedin.example.com/feed/update/1", "published_at": "2026-01-05T09:00:06+00:00"`) + `]}`
	accounts := `{"object": "list", "data": [{"id": 1, "object": "social_account", "platform": "instagram", "name": "Acme", "handle": "@acme", "publishable": false, "supports_images": true}],
		"has_more": false, "publishing_allowed": true, "connect_url": "https://app.example.com/settings/social-accounts"}`
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		answer                   string
		want                     []string
	}{
		{"generation refused", "POST", "/generations", genBody, 422, moderated, nil},
		{"encore refused", "POST", "/encore/creations", `{"effect": "e", "image_url": "https://example.com/a.jpg"}`, 422, moderated, nil},
		{"outputs failed", "GET", "/generations/7", "", 200, `{"object": "generation", "status": "completed", "assets": [` + asset(7, "completed") + `, ` + failed + `]}`, nil},
		{"account disconnected", "GET", "/social/publications/3", "", 200, pub, nil},
		{"account to reconnect", "GET", "/social/accounts", "", 200, accounts, nil},
		{"a 422 elsewhere", "GET", "/brand_kits", "", 422, moderated, []string{"drift.status status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newChecker(t)
			assert.Equal(t, tc.want, begin(k, key, tc.method, tc.path, tc.body).end(tc.status, tc.answer))
		})
	}
}
