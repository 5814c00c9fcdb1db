package proxy_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/proxy"
)

// TestReportEndpoint: the summary at GET /_mock/proxy/report, on the
// proxy's own listener; nothing else under /_mock/proxy/.
func TestReportEndpoint(t *testing.T) {
	srv := mediamock.RunT(t)
	f := startProxy(t, srv.BaseURL())
	client := f.srv.Client()
	getJSON(t, client, f.base()+"/account", mediamock.KeyAllScopes)
	r := getJSON(t, client, f.srv.URL+proxy.ReportPath, "")
	require.Equal(t, http.StatusOK, r.Status)
	m := r.JSON(t)
	assert.EqualValues(t, 1, m["exchanges"])
	assert.Equal(t, srv.URL(), m["upstream"])
	assert.Len(t, m["rules"], len(check.Rules))
	assert.Equal(t, http.StatusNotFound, getJSON(t, client, f.srv.URL+"/_mock/proxy/other", "").Status)
	assert.Equal(t, http.StatusMethodNotAllowed, postJSON(t, client, f.srv.URL+proxy.ReportPath, "", map[string]any{}).Status)
	// The mock's own control API is the upstream's, reached through the proxy.
	assert.Equal(t, http.StatusOK, getJSON(t, client, f.srv.URL+"/_mock/health", "").Status)

	var table strings.Builder
	f.p.WriteSummary(&table)
	assert.Contains(t, table.String(), "proxy summary: 1 exchanges")
	assert.Regexp(t, `ratelimit\.headers\s+1\s+0`, table.String())
}
