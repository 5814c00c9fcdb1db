package proxy_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/proxy"
)

// brokenUpstream is a server of the API that breaks one rule per path, on
// purpose, and is right about everything else.
func brokenUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	rate := func(h http.Header) {
		h.Set("X-RateLimit-Limit", "120")
		h.Set("X-RateLimit-Remaining", "100")
		h.Set("X-RateLimit-Reset", "1767225660")
	}
	write := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
	asset := func(id, status string) string {
		return `{"id": ` + id + `, "object": "asset", "kind": "image", "status": "` + status + `", "model": "imagen-4", "credits": 8, "created_at": "2026-01-05T09:00:00Z"}`
	}
	var polls atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/account", func(w http.ResponseWriter, r *http.Request) {
		rate(w.Header())
		w.Header().Del("X-RateLimit-Limit") // missing header
		write(w, 200, `{"object": "account", "workspace_id": 1, "workspace_name": "Broken Co", "plan": "pro", "credits_balance": 100,
			"rate_limit_per_minute": 120, "scopes": ["read", "generate", "publish"], "token_type": "api_key", "publishing_allowed": true, "monthly_gifts": []}`)
	})
	mux.HandleFunc("GET /api/v1/assets/7", func(w http.ResponseWriter, r *http.Request) {
		rate(w.Header())
		// wrong field type: credits as a string
		write(w, 200, `{"object": "generation", "status": "completed", "assets": [`+strings.Replace(asset("7", "completed"), `"credits": 8`, `"credits": "8"`, 1)+`]}`)
	})
	mux.HandleFunc("GET /api/v1/generations/8", func(w http.ResponseWriter, r *http.Request) {
		rate(w.Header())
		status := "processing"
		if polls.Add(1) > 1 {
			status = "queued" // backwards
		}
		write(w, 200, `{"object": "generation", "status": "`+status+`", "assets": [`+asset("8", status)+`]}`)
	})
	mux.HandleFunc("GET /api/v1/assets/9", func(w http.ResponseWriter, r *http.Request) {
		rate(w.Header())
		write(w, 404, `{"message": "no such asset"}`) // no error object
	})
	mux.HandleFunc("GET /api/v1/assets", func(w http.ResponseWriter, r *http.Request) {
		rate(w.Header())
		// not newest first, and gzip-encoded
		body := `{"object": "list", "data": [` + asset("3", "completed") + `, ` + asset("5", "completed") + `, ` + asset("4", "completed") + `], "has_more": false}`
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, body)
		zw.Close()
	})
	mux.HandleFunc("GET /api/v1/projects", func(w http.ResponseWriter, r *http.Request) {
		rate(w.Header())
		write(w, 429, `{"error": {"code": "rate_limited", "message": "Slow down."}}`) // no Retry-After
	})
	mux.HandleFunc("POST /api/v1/generations", func(w http.ResponseWriter, r *http.Request) {
		rate(w.Header())
		// 100 - 8 is 92, not 90
		write(w, 201, `{"object": "generation", "status": "queued", "assets": [`+asset("20", "queued")+`], "credits_charged": 8, "credits_balance": 90, "covered_by_monthly_gift": false}`)
	})
	mux.HandleFunc("GET /api/v1/models", func(w http.ResponseWriter, r *http.Request) {
		rate(w.Header())
		// larger than the proxy keeps: passed on, not checked
		write(w, 200, `{"object": "catalog", "modalities": {}, "padding": "`+strings.Repeat("x", 100<<10)+`"}`)
	})
	mux.HandleFunc("GET /files/blob.bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(blob)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

var blob = bytes.Repeat([]byte{0, 1, 2, 3, 250, 251, 252, 253}, 512<<10) // 4 MiB

const secret = "mk_secret_token_for_test_9f3a"

// TestBrokenUpstream: each rule broken on purpose is reported with its
// rule id and JSON path, in the report file, the violations header and the
// summary; the token never appears in any of them, nor in the log.
func TestBrokenUpstream(t *testing.T) {
	up := brokenUpstream(t)
	reportFile := filepath.Join(t.TempDir(), "report.jsonl")
	file, err := os.Create(reportFile)
	require.NoError(t, err)
	defer file.Close()
	f := startProxy(t, up.URL+"/api/v1", func(o *proxy.Options) {
		o.Report = io.MultiWriter(file, o.Report)
		o.MaxValidateBytes = 64 << 10
	})
	client := f.srv.Client()

	type want struct{ rule, path, label string }
	steps := []struct {
		method, path string
		want         []want
	}{
		{"GET", "/account?access_token=" + secret + "&modality=x", []want{{check.RuleRateHeaders, "headers.X-RateLimit-Limit", "spec (Limits: Rate limit)"}}},
		{"GET", "/assets/7", []want{{check.RuleBody, "$.assets[0].credits", "spec (Endpoints: GET /assets/{id})"}}},
		{"GET", "/generations/8", nil},
		{"GET", "/generations/8", []want{{check.RuleStatusOrder, "$.assets[0].status", "spec (States and transitions: Asset status)"}}},
		{"GET", "/assets/9", []want{{check.RuleErrorObject, "$.error", "spec (Errors)"}}},
		{"GET", "/assets", []want{{check.RuleListOrder, "$.data[1].id", "spec (Endpoints)"}}},
		{"GET", "/projects", []want{{check.RuleRetryAfter, "headers.Retry-After", "spec (Errors)"}}},
		{"POST", "/generations", []want{{check.RuleBalance, "$.credits_balance", "spec (Limits: Credits)"}}},
	}
	for _, s := range steps {
		var r *response
		if s.method == "POST" {
			r = postJSON(t, client, f.base()+s.path, secret, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "a broken lighthouse"})
		} else {
			r = getJSON(t, client, f.base()+s.path, secret)
		}
		var got []want
		lines := f.lines(t)
		if len(s.want) > 0 {
			require.NotEmpty(t, lines, "%s %s", s.method, s.path)
			last := lines[len(lines)-1]
			assert.Equal(t, s.method, last.Method)
			assert.Equal(t, check.BasePath+strings.Split(s.path, "?")[0], last.Path)
			assert.Equal(t, r.Status, last.Status)
			for _, v := range last.Violations {
				got = append(got, want{v.Rule, v.Path, v.Source.String()})
				assert.NotEmpty(t, v.Message)
			}
			assert.Equal(t, s.want, got, "%s %s", s.method, s.path)
			assert.Equal(t, "1; rules="+s.want[0].rule, r.Header.Get(proxy.ViolationsHeader))
		} else {
			assert.Empty(t, r.Header.Get(proxy.ViolationsHeader), "%s %s", s.method, s.path)
		}
	}
	first := f.lines(t)[0]
	assert.Equal(t, "Bearer "+check.MaskValue(secret), first.Credential)
	assert.Equal(t, "access_token="+check.MaskValue(secret)+"&modality=x", first.Query)
	assert.Equal(t, "getAccount", first.Operation)

	// A JSON body over the cap passes whole, unchecked, and the report says so.
	r := getJSON(t, client, f.base()+"/models", secret)
	require.Equal(t, http.StatusOK, r.Status)
	assert.Greater(t, len(r.Body), 100<<10)
	assert.True(t, json.Valid(r.Body))
	last := f.lines(t)[len(f.lines(t))-1]
	assert.Equal(t, "/api/v1/models", last.Path)
	require.Len(t, last.Skipped, 1)
	assert.Contains(t, last.Skipped[0], "response body: over the 65536 bytes kept for validation")
	assert.Empty(t, last.Violations)
	// A file passes through byte for byte, and is no exchange of the API.
	r = getJSON(t, client, f.srv.URL+"/files/blob.bin", secret)
	assert.True(t, bytes.Equal(blob, r.Body))

	s := f.p.Summary()
	assert.Equal(t, 9, s.Exchanges)
	assert.Equal(t, 7, s.WithViolations)
	assert.Equal(t, 7, s.Violations)
	assert.Equal(t, 1, s.Skipped)
	assert.Equal(t, 1, s.Others)
	counts := map[string]int{}
	for _, r := range s.Rules {
		counts[r.Rule] = r.Violations
	}
	for _, st := range steps {
		for _, w := range st.want {
			assert.Equal(t, 1, counts[w.rule], w.rule)
		}
	}

	var table strings.Builder
	f.p.WriteSummary(&table)
	assert.Regexp(t, `list\.order\s+\d+\s+1`, table.String())
	summaryJSON := getJSON(t, client, f.srv.URL+proxy.ReportPath, "")
	require.NoError(t, file.Sync())
	fromFile, err := os.ReadFile(reportFile)
	require.NoError(t, err)
	assert.Equal(t, f.report.String(), string(fromFile))
	assert.Len(t, strings.Split(strings.TrimSpace(string(fromFile)), "\n"), 8)
	for name, out := range map[string]string{"report file": string(fromFile), "log": f.log.String(), "summary": table.String(), "summary JSON": string(summaryJSON.Body)} {
		assert.NotContains(t, out, secret, name)
		assert.NotContains(t, out, "mk_secret", name)
	}
}
