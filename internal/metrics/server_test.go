package metrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/internal/metrics"
	"github.com/mediamock/mediamock/internal/testkit"
)

// scrape reads GET /_mock/metrics and parses it with Prometheus's own
// text parser.
func scrape(t *testing.T, srv *mediamock.Server, hdr ...string) map[string]*dto.MetricFamily {
	t.Helper()
	status, body := testkit.Control(t, srv, "GET", "/metrics", "", hdr...)
	require.Equal(t, http.StatusOK, status, body)
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err, body)
	return families
}

// labels are a metric's labels as a map.
func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// value is a counter's or a gauge's value.
func value(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}

// sum adds the values of the metrics of family name whose labels match
// want.
func sum(families map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var total float64
	for _, m := range families[name].GetMetric() {
		l := labels(m)
		ok := true
		for k, v := range want {
			ok = ok && l[k] == v
		}
		if ok {
			total += value(m)
		}
	}
	return total
}

// TestMetricsAgreeWithTheJournal: after a scripted run (creations, a job
// failed by a fault, a 429 from the rate window and one forced by a
// header, MCP calls), the request counters of /_mock/metrics agree with
// the journal, front by front and status by status, and the state's
// metrics say what happened.
func TestMetricsAgreeWithTheJournal(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithSeed(3), func(o *mediamock.Options) {
		o.Clock, o.NoListener = mediamock.ClockManual, true
	})
	rest := func(key, method, path, body string, hdr ...string) int {
		t.Helper()
		req, err := http.NewRequest(method, srv.BaseURL()+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, _ := testkit.Do(t, srv, req)
		return resp.StatusCode
	}
	const gen = `{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse"}`
	status, body := testkit.Control(t, srv, "POST", "/faults/fail-next", `{"count":1,"modality":"image","code":"content_policy"}`)
	require.Equal(t, http.StatusOK, status, body)
	for range 3 {
		require.Equal(t, http.StatusCreated, rest(mediamock.KeyAllScopes, "POST", "/generations", gen))
	}
	require.Equal(t, http.StatusOK, rest(mediamock.KeyAllScopes, "GET", "/account", ""))
	require.Equal(t, http.StatusNotFound, rest(mediamock.KeyAllScopes, "GET", "/no-such-thing", ""))
	require.Equal(t, http.StatusTooManyRequests, rest(mediamock.KeyAllScopes, "GET", "/account", "", "Mock-Fault", "status; status=429"))

	// A workspace of two requests a minute: its third is refused.
	ws, err := srv.AddWorkspace(mediamock.WorkspaceSpec{Name: "tight", Plan: "free", Credits: 10, RateLimitPerMinute: 2, Token: "mk_test_tight"})
	require.NoError(t, err)
	for i, want := range []int{200, 200, 429} {
		require.Equal(t, want, rest(ws.Token, "GET", "/account", ""), "request %d", i)
	}

	// MCP: a sessionless tool call.
	req, err := http.NewRequest("POST", srv.MCPURL(), strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_account","arguments":{},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "get_account")
	resp, mcpBody := testkit.Do(t, srv, req)
	require.Equal(t, http.StatusOK, resp.StatusCode, mcpBody)

	// Every job ends: one fails (the fault), two complete.
	status, body = testkit.Control(t, srv, "POST", "/clock/advance", `{"duration":"1h"}`)
	require.Equal(t, http.StatusOK, status, body)

	families := scrape(t, srv)

	// The journal, counted by front and status.
	status, body = testkit.Control(t, srv, "GET", "/journal?limit=500", "")
	require.Equal(t, http.StatusOK, status, body)
	var journal struct {
		Entries []controlapi.JournalEntry `json:"entries"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &journal))
	counted := map[string]float64{}
	for _, e := range journal.Entries {
		counted[e.Front+" "+strconv.Itoa(e.Status)]++
	}
	require.NotEmpty(t, counted)
	metered := map[string]float64{}
	for _, m := range families["mediamock_requests_total"].GetMetric() {
		l := labels(m)
		if l["front"] == "rest" || l["front"] == "mcp" {
			metered[l["front"]+" "+l["status"]] += value(m)
		}
	}
	assert.Equal(t, counted, metered, "the requests of the journal and of the metrics, by front and status")
	assert.Equal(t, 3.0, sum(families, "mediamock_requests_total", map[string]string{"front": "rest", "operation": "createGeneration", "status": "201"}))
	assert.Equal(t, 1.0, sum(families, "mediamock_requests_total", map[string]string{"front": "mcp", "operation": "getAccount", "status": "200"}))
	assert.Equal(t, 1.0, sum(families, "mediamock_requests_total", map[string]string{"front": "rest", "operation": "none", "status": "404"}))
	assert.Positive(t, sum(families, "mediamock_requests_total", map[string]string{"front": "control", "operation": "advanceClock", "status": "200"}))

	assert.Equal(t, 1.0, sum(families, "mediamock_too_many_requests_total", map[string]string{"front": "rest", "cause": "rate_limit"}))
	assert.Equal(t, 1.0, sum(families, "mediamock_too_many_requests_total", map[string]string{"front": "rest", "cause": "fault"}))
	assert.Equal(t, 1.0, sum(families, "mediamock_fault_hits_total", map[string]string{"kind": "status", "via": "header"}))
	assert.Equal(t, 1.0, sum(families, "mediamock_fault_hits_total", map[string]string{"kind": "job_failure", "via": "rule"}))

	assert.Equal(t, 2.0, sum(families, "mediamock_jobs", map[string]string{"modality": "image", "status": "completed"}))
	assert.Equal(t, 1.0, sum(families, "mediamock_jobs", map[string]string{"modality": "image", "status": "failed"}))
	assert.Equal(t, 0.0, sum(families, "mediamock_queue_depth", nil))
	assert.Positive(t, sum(families, "mediamock_concurrency_limit", map[string]string{"modality": "image"}))
	var ended uint64
	for _, m := range families["mediamock_job_duration_seconds"].GetMetric() {
		ended += m.GetHistogram().GetSampleCount()
		assert.Positive(t, m.GetHistogram().GetSampleSum(), "durations on the mock's clock")
	}
	assert.Equal(t, uint64(3), ended)
	charged := sum(families, "mediamock_credits_total", map[string]string{"movement": "charge"})
	refunded := sum(families, "mediamock_credits_total", map[string]string{"movement": "refund"})
	assert.Positive(t, charged)
	assert.Equal(t, charged/3, refunded, "one of three equal jobs was refunded")
	assert.Equal(t, 0.0, sum(families, "mediamock_long_polls_open", nil))
	assert.Equal(t, 0.0, sum(families, "mediamock_sandboxes", nil))
	assert.Contains(t, families, "mediamock_mcp_sessions_open")
}

// TestMetricsLabelsAreBounded: requests to 200 different unknown paths,
// on the API and under the control API, add one label set each at most.
func TestMetricsLabelsAreBounded(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.NoListener = true })
	count := func() int {
		return len(scrape(t, srv)["mediamock_requests_total"].GetMetric())
	}
	before := count()
	after := count() // the first scrape counted itself
	for i := range 200 {
		req, err := http.NewRequest("GET", fmt.Sprintf("%s/unknown/%d", srv.BaseURL(), i), nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
		testkit.Do(t, srv, req)
		req, err = http.NewRequest("GET", fmt.Sprintf("%s/_mock/unknown/%d", srv.URL(), i), nil)
		require.NoError(t, err)
		testkit.Do(t, srv, req)
	}
	assert.LessOrEqual(t, count()-after, 2, "one label set for the API's unknown paths, one for the control API's (first scrape: %d)", before)
}

// TestMetricsNeedTheControlIdentity: with a control token, /_mock/metrics
// answers only the server's control token: a request without one is
// refused 401, a sandbox's control token 403 (the metrics are the whole
// server's).
func TestMetricsNeedTheControlIdentity(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.ControlToken = "ctl-secret" })
	status, body := testkit.Control(t, srv, "GET", "/metrics", "")
	assert.Equal(t, http.StatusUnauthorized, status, body)
	status, body = testkit.Control(t, srv, "GET", "/metrics", "", "Authorization", "Bearer wrong")
	assert.Equal(t, http.StatusUnauthorized, status, body)

	status, body = testkit.Control(t, srv, "POST", "/sandboxes", `{}`, "Authorization", "Bearer ctl-secret")
	require.Equal(t, http.StatusCreated, status, body)
	var sb struct {
		ControlToken string `json:"control_token"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &sb))
	require.NotEmpty(t, sb.ControlToken, body)
	status, body = testkit.Control(t, srv, "GET", "/metrics", "", "Authorization", "Bearer "+sb.ControlToken)
	assert.Equal(t, http.StatusForbidden, status, body)
	assert.Equal(t, "outside_sandbox", testkit.ErrorCode(t, body))

	families := scrape(t, srv, "Authorization", "Bearer ctl-secret")
	assert.Equal(t, 1.0, sum(families, "mediamock_sandboxes", nil))
	assert.Equal(t, 1.0, sum(families, "mediamock_requests_total", map[string]string{"front": "control", "operation": "getMetrics", "status": "403"}))
}

// TestMetricsReference: docs/reference/metrics.md has a row for every
// metric of the server, with its type and labels, and names none that is
// not one.
func TestMetricsReference(t *testing.T) {
	data, err := os.ReadFile("../../docs/reference/metrics.md")
	require.NoError(t, err)
	doc := string(data)
	defined := map[string]bool{}
	for _, m := range metrics.Reference() {
		defined[m.Name] = true
		labels := make([]string, len(m.Labels))
		for i, l := range m.Labels {
			labels[i] = "`" + l + "`"
		}
		row := fmt.Sprintf("| `%s` | %s | %s |", m.Name, m.Type, strings.Join(labels, ", "))
		if len(labels) == 0 {
			row = fmt.Sprintf("| `%s` | %s | |", m.Name, m.Type)
		}
		assert.Contains(t, doc, row, "the reference's row of %s", m.Name)
	}
	for _, name := range regexp.MustCompile("`(mediamock_[a-z_]+)`").FindAllStringSubmatch(doc, -1) {
		assert.True(t, defined[name[1]], "the reference names %s, which the server does not have", name[1])
	}
}

// TestMetricsQueuesAndLongPolls: past a workspace's concurrency limit its
// jobs queue, and the metrics say how many wait against the limit; a long
// poll in progress is counted while it waits.
func TestMetricsQueuesAndLongPolls(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock, o.NoListener = mediamock.ClockManual, true })
	families := scrape(t, srv)
	limit := sum(families, "mediamock_concurrency_limit", map[string]string{"modality": "image"})
	require.Positive(t, limit)
	var first float64
	for i := range int(limit) + 2 {
		gen := testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a queue"}`)
		if i == 0 {
			first = gen["assets"].([]any)[0].(map[string]any)["id"].(float64)
		}
	}
	families = scrape(t, srv)
	assert.Equal(t, limit, sum(families, "mediamock_jobs_running", map[string]string{"modality": "image"}))
	assert.Equal(t, 2.0, sum(families, "mediamock_queue_depth", map[string]string{"modality": "image"}))
	assert.Equal(t, 1.0, sum(families, "mediamock_workspaces_at_concurrency_limit", map[string]string{"modality": "image"}))
	assert.Equal(t, limit+2, sum(families, "mediamock_jobs", map[string]string{"modality": "image"}))
	assert.Equal(t, 0.0, sum(families, "mediamock_queue_depth", map[string]string{"modality": "video"}))

	// A long poll on the manual clock waits until the clock moves.
	polled := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/generations/%d?wait_seconds=30", srv.BaseURL(), int(first)), nil)
		req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
		resp, err := srv.Client().Do(req)
		if err != nil {
			polled <- 0
			return
		}
		resp.Body.Close()
		polled <- resp.StatusCode
	}()
	testkit.Poll(t, "the long poll waits", func() bool {
		return sum(scrape(t, srv), "mediamock_long_polls_open", nil) == 1
	})
	status, body := testkit.Control(t, srv, "POST", "/clock/advance", `{"duration":"1h"}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, http.StatusOK, testkit.Receive(t, polled, "the long poll's answer"))
	families = scrape(t, srv)
	assert.Equal(t, 0.0, sum(families, "mediamock_long_polls_open", nil))
	assert.Equal(t, 0.0, sum(families, "mediamock_queue_depth", nil))
}

// A tool call over stdio passes no edge; it counts all the same, as an
// MCP request of its operation, and is journaled once.
func TestMetricsCountStdioToolCalls(t *testing.T) {
	srv := mediamock.RunT(t)
	in := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_account","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n"
	var out strings.Builder
	require.NoError(t, srv.ServeMCP(context.Background(), strings.NewReader(in), &out, mediamock.KeyAllScopes))
	require.Contains(t, out.String(), `"result"`, out.String())
	families := scrape(t, srv)
	assert.Equal(t, 1.0, sum(families, "mediamock_requests_total", map[string]string{"front": "mcp", "operation": "getAccount", "status": "200"}))
}
