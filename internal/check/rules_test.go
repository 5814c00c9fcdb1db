package check_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mediamock/mediamock/internal/check"
)

// TestLabels: every finding says whose it is: the specification's, with
// its section, or one of the mock's decisions, with its id.
func TestLabels(t *testing.T) {
	key := "mk_a_key_0001"
	for _, tc := range []struct {
		name         string
		method, path string
		reqBody      string
		status       int
		body         string
		header       []string
		want         string // "rule-or-drift.kind path: label"
	}{
		{"a field of the account, whose names are the mock's", "GET", "/account", "", 200, strings.Replace(account(1, 5), `"plan": "pro"`, `"plan": 7`, 1), nil,
			"openapi.body $.plan: mock-decision D-3"},
		{"a field the account does not declare", "GET", "/account", "", 200, strings.Replace(account(1, 5), `"plan": "pro"`, `"plan": "pro", "tier": 2`, 1), nil,
			"drift.field $.tier: mock-decision D-3"},
		{"a field of an asset the specification names", "GET", "/assets/3", "", 200, strings.Replace(generation(3, "completed"), `"credits": 8`, `"credits": "8"`, 1), nil,
			"openapi.body $.assets[0].credits: spec (Endpoints: GET /assets/{id})"},
		{"a field of an asset the mock added", "GET", "/assets/3", "", 200, strings.Replace(generation(3, "completed"), `"credits": 8`, `"credits": 8, "project_id": "x"`, 1), nil,
			"openapi.body $.assets[0].project_id: mock-decision D-5"},
		{"an unknown request field served", "POST", "/generations", `{"modality": "image", "model_id": "imagen-4", "prompt": "p", "aspectRatio": "1:1"}`, 201, created(30, 0, 5), nil,
			"openapi.request request.body.aspectRatio: mock-decision D-2"},
		{"a request field the specification bounds, served", "POST", "/generations", `{"modality": "image", "model_id": "imagen-4", "prompt": "p", "count": 9}`, 201, created(31, 0, 5), nil,
			"openapi.request request.body.count: spec (Endpoints: POST /generations)"},
		{"a status the document does not declare", "GET", "/account", "", 418, `{"error": {"code": "teapot", "message": "no"}}`, nil,
			"drift.status status: mock-decision D-1"},
		{"a missing rate-limit header", "GET", "/account", "", 200, account(1, 5), []string{"X-RateLimit-Reset", ""},
			"ratelimit.headers headers.X-RateLimit-Reset: spec (Limits: Rate limit)"},
		{"brand kits not newest first", "GET", "/brand_kits", "", 200, `{"object": "list", "data": [` + brandKit(1) + `, ` + brandKit(2) + `], "has_more": false}`, nil,
			"list.order $.data[1].id: mock-decision D-11"},
		{"the document, its own section", "GET", "/openapi.json", "", 200, `{"openapi": "3.0.3"}`, []string{"X-Trace-Id", "t"},
			"drift.header headers.X-Trace-Id: spec (What the service does)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newChecker(t)
			begin(k, key, "GET", "/account", "").end(200, account(1, 5))
			c := begin(k, key, tc.method, tc.path, tc.reqBody)
			h := http.Header{"Content-Type": {"application/json"}, "X-Ratelimit-Limit": {"120"}, "X-Ratelimit-Remaining": {"119"}, "X-Ratelimit-Reset": {"1767225660"}}
			for i := 0; i+1 < len(tc.header); i += 2 {
				if tc.header[i+1] == "" {
					h.Del(tc.header[i])
				} else {
					h.Set(tc.header[i], tc.header[i+1])
				}
			}
			rh := http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}}
			res := k.Finish(c.p, &check.Exchange{Method: tc.method, URL: c.u, Header: rh, Body: []byte(tc.reqBody), Status: tc.status, ResponseHeader: h, ResponseBody: []byte(tc.body)})
			var got []string
			for _, v := range res.Violations {
				got = append(got, v.Rule+" "+v.Path+": "+v.Source.String())
			}
			for _, d := range res.Drift {
				got = append(got, "drift."+d.Kind+" "+d.Path+": "+d.Source.String())
			}
			assert.Equal(t, []string{tc.want}, got)
		})
	}
}
