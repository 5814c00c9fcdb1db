package fault_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// Bad fault specs are refused whole, naming the field; nothing is kept.
func TestBadFaultSpecs(t *testing.T) {
	srv := mediamock.RunT(t)
	for _, tc := range []struct{ body, field string }{
		{`{"kind":"meltdown"}`, "kind"},
		{`{}`, "kind"},
		{`{"kind":"truncate","after_bytes":-1}`, "after_bytes"},
		{`{"kind":"slow_body"}`, "bytes_per_second"},
		{`{"kind":"slow_body","bytes_per_second":-5}`, "bytes_per_second"},
		{`{"kind":"reset","probability":1.5}`, "probability"},
		{`{"kind":"latency"}`, "distribution"},
		{`{"kind":"latency","distribution":"uniform","min_ms":10}`, "max_ms"},
		{`{"kind":"latency","distribution":"lognormal","median_ms":100}`, "sigma"},
		{`{"kind":"latency","distribution":"fixed","ms":5,"sigma":1}`, "sigma"},
		{`{"kind":"file_expiry"}`, "ttl_seconds"},
		{`{"kind":"file_expiry","ttl_seconds":60,"class":"api"}`, "class"},
		{`{"kind":"mcp_unavailable","operation":"getAccount"}`, "operation"},
		{`{"kind":"status","status":418}`, "status"},
		{`{"kind":"reset","bytes_per_second":10}`, "bytes_per_second"},
		{`{"kind":"truncate","after_bytes":1,"after_fraction":0.5}`, "after_fraction"},
	} {
		status, body := testkit.Control(t, srv, "POST", "/faults/rules", tc.body)
		assert.Equal(t, 400, status, tc.body)
		assert.Contains(t, body, `"field":"`+tc.field+`"`, "%s names %s: %s", tc.body, tc.field, body)
	}
	f, err := srv.Faults()
	require.NoError(t, err)
	assert.Empty(t, f.Rules, "nothing was half-applied")

	for _, tc := range []struct{ header, reason string }{
		{"meltdown", "unknown fault kind"},
		{"truncate; after_bytes=-1", "after_bytes"},
		{"truncate; after_bytes", "name=value"},
		{"latency; distribution=lognormal; median_ms=10", "sigma"},
		{"reset; probability=2", "probability"},
		{"file_expiry; ttl_seconds=1", "files"},
		{"reset; operation=getAccount", "targets rules"},
	} {
		resp, body := testkit.Send(t, srv, "GET", "/api/v1/account", "", map[string]string{"Mock-Fault": tc.header, "Authorization": "Bearer " + mediamock.KeyAllScopes}, "")
		assert.Equal(t, 400, resp.StatusCode, tc.header)
		assert.Contains(t, body, "Mock-Fault", tc.header)
		assert.Contains(t, body, tc.reason, tc.header)
	}
}
