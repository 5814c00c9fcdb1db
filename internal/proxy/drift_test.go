package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/proxy"
)

// driftingUpstream answers as the document says, plus what it does not
// declare: a field, an enum value, a header, a status.
func driftingUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	write := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("X-RateLimit-Limit", "120")
		w.Header().Set("X-RateLimit-Remaining", "100")
		w.Header().Set("X-RateLimit-Reset", "1767225660")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
	asset := func(id, status string) string {
		return `{"id": ` + id + `, "object": "asset", "kind": "image", "status": "` + status + `", "model": "imagen-4", "credits": 8, "created_at": "2026-01-05T09:00:00Z", "seed": 7}`
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/account", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Edge-Trace", "trace-1") // a header
		write(w, 200, `{"object": "account", "workspace_id": 1, "workspace_name": "Drift Co", "plan": "pro", "credits_balance": 100, "tier": "gold",
			"rate_limit_per_minute": 120, "scopes": ["read", "generate", "publish"], "token_type": "api_key", "publishing_allowed": true, "monthly_gifts": []}`)
	})
	mux.HandleFunc("GET /api/v1/assets", func(w http.ResponseWriter, r *http.Request) {
		// a field on every asset
		write(w, 200, `{"object": "list", "data": [`+asset("5", "completed")+`, `+asset("4", "completed")+`], "has_more": false}`)
	})
	mux.HandleFunc("GET /api/v1/generations/9", func(w http.ResponseWriter, r *http.Request) {
		// a status value
		write(w, 200, `{"object": "generation", "status": "archived", "assets": [`+asset("9", "archived")+`]}`)
	})
	mux.HandleFunc("GET /api/v1/projects", func(w http.ResponseWriter, r *http.Request) {
		write(w, 418, `{"error": {"code": "teapot", "message": "I am a teapot."}}`) // a status
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestDriftingUpstream: each thing the document does not declare is
// reported as drift with its path and operation, apart from violations,
// in the report, the drift header and the summary.
func TestDriftingUpstream(t *testing.T) {
	f := startProxy(t, driftingUpstream(t).URL+"/api/v1")
	client := f.srv.Client()
	type drift struct{ kind, path, label string }
	for _, s := range []struct {
		path, op string
		want     []drift
	}{
		{"/account", "getAccount", []drift{{check.DriftHeader, "headers.X-Edge-Trace", "spec (Endpoints: GET /account)"}, {check.DriftField, "$.tier", "mock-decision D-3"}}},
		{"/assets", "listAssets", []drift{{check.DriftField, "$.data[0].seed", "spec (Endpoints: GET /assets)"}, {check.DriftField, "$.data[1].seed", "spec (Endpoints: GET /assets)"}}},
		{"/generations/9", "getGeneration", nil}, // below
		{"/projects", "listProjects", []drift{{check.DriftStatus, "status", "mock-decision D-1"}}},
	} {
		r := getJSON(t, client, f.base()+s.path, secret)
		lines := f.lines(t)
		require.NotEmpty(t, lines, s.path)
		last := lines[len(lines)-1]
		assert.Equal(t, s.op, last.Operation)
		assert.Empty(t, last.Violations, s.path)
		var got []drift
		for _, d := range last.Drift {
			assert.NotEmpty(t, d.Message)
			got = append(got, drift{d.Kind, d.Path, d.Source.String()})
		}
		if s.path == "/generations/9" {
			// the field and the two values, whatever their labels
			require.Len(t, got, 3)
			assert.Equal(t, drift{check.DriftField, "$.assets[0].seed", "spec (Endpoints: GET /generations/{id})"}, got[0])
			assert.Equal(t, check.DriftEnum, got[1].kind)
			assert.Equal(t, "$.assets[0].status", got[1].path)
			assert.Equal(t, drift{check.DriftEnum, "$.status", "spec (Endpoints: GET /generations/{id})"}, got[2])
		} else {
			assert.Equal(t, s.want, got, s.path)
		}
		assert.Regexp(t, `^\d+; kinds=`, r.Header.Get(proxy.DriftHeader))
		assert.Empty(t, r.Header.Get(proxy.ViolationsHeader))
	}
	s := f.p.Summary()
	assert.Zero(t, s.Violations, f.report.String())
	assert.Equal(t, 4, s.WithDrift)
	assert.Equal(t, 8, s.Drift)
	assert.Equal(t, []proxy.DriftKind{{Kind: "field", Count: 4}, {Kind: "enum", Count: 2}, {Kind: "header", Count: 1}, {Kind: "status", Count: 1}}, s.DriftByKind)
	places := map[string]int{}
	for _, d := range s.DriftByPlace {
		places[d.Kind+" "+d.Operation+" "+d.Path] = d.Count
	}
	assert.Equal(t, map[string]int{
		"field getAccount $.tier": 1, "header getAccount headers.X-Edge-Trace": 1, "field listAssets $.data[*].seed": 2,
		"field getGeneration $.assets[*].seed": 1, "enum getGeneration $.assets[*].status": 1, "enum getGeneration $.status": 1,
		"status listProjects status": 1,
	}, places)
	assert.Empty(t, s.Failure(proxy.FailOnViolation))
	assert.Equal(t, "8 drift findings in 4 exchanges", s.Failure(proxy.FailOnDrift))
	var table testWriter
	f.p.WriteSummary(&table)
	assert.Contains(t, string(table), "drift: 4 field, 2 enum, 1 header, 1 status")
	assert.Regexp(t, `field\s+2\s+listAssets\s+\$\.data\[\*\]\.seed`, string(table))
}

type testWriter []byte

func (w *testWriter) Write(p []byte) (int, error) { *w = append(*w, p...); return len(p), nil }
