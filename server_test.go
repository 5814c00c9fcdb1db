package mediamock_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/control"
	"github.com/mediamock/mediamock/internal/testkit"
)

// A test written like a user's suite: start, inject a failure, move the
// clock, check the refund in the ledger.
func TestUserStyleRefundThroughLedger(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	require.NoError(t, srv.FailNext(mediamock.FailRule{Count: 1}))

	gen := call(srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a kite","count":2}`)
	srv.Advance(time.Minute)

	ws, _ := srv.WorkspaceID(mediamock.KeyAllScopes)
	ledger, err := srv.Ledger(ws)
	require.NoError(t, err)
	last := ledger[len(ledger)-1]
	assert.Equal(t, "refund", last.Type)
	assert.EqualValues(t, gen["credits_charged"], last.Amount)
	assert.EqualValues(t, 5000, last.Balance)
}

// exchange is one request of a scenario and everything it was answered.
type exchange struct {
	method, path, token, body string
}

func (x exchange) do(t *testing.T, srv *mediamock.Server) string {
	t.Helper()
	req, err := http.NewRequest(x.method, srv.URL()+x.path, strings.NewReader(x.body))
	require.NoError(t, err)
	if x.token != "" {
		req.Header.Set("Authorization", "Bearer "+x.token)
	}
	if x.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var keys []string
	for k := range resp.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s -> %d\n", x.method, x.path, resp.StatusCode)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(resp.Header[k], ","))
	}
	b.Write(body)
	return b.String()
}

// runScenario drives one server through requests and clock moves and
// records every byte it answered.
func runScenario(t *testing.T, seed uint64) []string {
	t.Helper()
	srv, err := mediamock.New(mediamock.Options{NoListener: true, Clock: mediamock.ClockManual, Seed: seed,
		DBPath: t.TempDir() + "/state.db", PublicURL: "http://mock.example"})
	require.NoError(t, err)
	defer srv.Close()
	const all = mediamock.KeyAllScopes
	var out []string
	step := func(x exchange) string {
		s := x.do(t, srv)
		out = append(out, s)
		return s
	}
	step(exchange{"GET", "/api/v1/account", all, ""})
	step(exchange{"GET", "/api/v1/brand_kits?limit=2", all, ""})
	step(exchange{"GET", "/api/v1/characters", all, ""})
	step(exchange{"POST", "/api/v1/generations", all, `{"modality":"image","model_id":"seedream-4","prompt":"a red fox","count":3,"aspect_ratio":"3:4"}`})
	step(exchange{"POST", "/api/v1/generations", all, `{"modality":"video","model_id":"veo-3-fast","prompt":"surf at dawn","duration":4}`})
	step(exchange{"POST", "/api/v1/generations", all, `{"modality":"audio","model_id":"eleven-multilingual-v2","prompt":"Hello and welcome to the show.","voice":"mia"}`})
	step(exchange{"POST", "/api/v1/generations", all, `{"modality":"audio","track":"music","model_id":"stable-audio-2","prompt":"lofi beat","duration":10}`})
	step(exchange{"POST", "/api/v1/generations", all, `{"modality":"image","model_id":"imagen-4","prompt":"doomed [mock:fail]"}`})
	step(exchange{"POST", "/api/v1/encore/creations", all, `{"effect":"snow-globe","character_id":1}`})
	srv.Advance(45 * time.Second)
	step(exchange{"GET", "/api/v1/assets?limit=10", all, ""})
	srv.Advance(10 * time.Minute)
	list := step(exchange{"GET", "/api/v1/assets?limit=12", all, ""})
	step(exchange{"GET", "/api/v1/encore/creations/1", all, ""})
	// Every file the library points at, byte for byte.
	for _, u := range urlsIn(list) {
		step(exchange{"GET", strings.TrimPrefix(u, "http://mock.example"), "", ""})
	}
	step(exchange{"POST", "/api/v1/social/publications", all, `{"asset_ids":[1],"caption":"hi [mock:fail-platform=linkedin]","platforms":["instagram","linkedin"]}`})
	srv.Advance(time.Minute)
	step(exchange{"GET", "/api/v1/social/publications/1", all, ""})
	ws, _ := srv.WorkspaceID(all)
	ledger, err := srv.Ledger(ws)
	require.NoError(t, err)
	out = append(out, fmt.Sprintf("%+v", ledger))
	return out
}

func urlsIn(s string) []string {
	var out []string
	for _, part := range strings.Split(s, `"url":"`)[1:] {
		out = append(out, part[:strings.IndexByte(part, '"')])
	}
	return out
}

func TestSameSeedSameBytes(t *testing.T) {
	a := runScenario(t, 42)
	b := runScenario(t, 42)
	require.Equal(t, len(a), len(b))
	for i := range a {
		require.Equal(t, a[i], b[i], "exchange %d differs", i)
	}
	assert.Greater(t, len(a), 20, "the scenario read files too")
	c := runScenario(t, 43)
	assert.NotEqual(t, strings.Join(a, ""), strings.Join(c, ""), "another seed gives other bytes")
}

// The same control, over HTTP only, as a container user in any language has.
func TestControlAPIOverHTTP(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })

	status, body := testkit.Control(t, srv, "POST", "/faults/fail-next", `{"count":1,"modality":"image","code":"content_policy"}`)
	require.Equal(t, http.StatusOK, status, body)
	gen := call(srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"x"}`)
	require.Equal(t, "queued", gen["status"])

	status, body = testkit.Control(t, srv, "POST", "/clock/advance", `{"duration":"2m"}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"now":"2026-01-05T09:02:00+00:00"`)

	id := int(gen["assets"].([]any)[0].(map[string]any)["id"].(float64))
	read := call(srv, "GET", fmt.Sprintf("/generations/%d", id), "")
	assert.Equal(t, "failed", read["status"])
	assert.Equal(t, "content_policy", read["assets"].([]any)[0].(map[string]any)["error"].(map[string]any)["code"])

	status, body = testkit.Control(t, srv, "GET", "/workspaces/1/ledger", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"type":"refund","amount":6,"balance_after":5000`)

	// Acting on jobs: stick one, then fail it; complete another.
	g2 := call(srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"y"}`)
	id2 := int(g2["assets"].([]any)[0].(map[string]any)["id"].(float64))
	status, _ = testkit.Control(t, srv, "POST", fmt.Sprintf("/assets/%d/stick", id2), "")
	require.Equal(t, http.StatusOK, status)
	testkit.Control(t, srv, "POST", "/clock/advance", `{"seconds":3600}`)
	assert.Equal(t, "queued", call(srv, "GET", fmt.Sprintf("/assets/%d", id2), "")["status"], "stuck")
	status, body = testkit.Control(t, srv, "POST", fmt.Sprintf("/assets/%d/complete", id2), "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"status":"completed"`)
	status, body = testkit.Control(t, srv, "POST", fmt.Sprintf("/assets/%d/fail", id2), "")
	assert.Equal(t, http.StatusConflict, status, body)

	// Workspaces and keys made at run time work at once.
	status, body = testkit.Control(t, srv, "POST", "/workspaces", `{"name":"Tiny","plan":"free","credits":7,"token":"mk_test_tiny_ws"}`)
	require.Equal(t, http.StatusCreated, status, body)
	req, _ := http.NewRequest("GET", srv.BaseURL()+"/account", nil)
	req.Header.Set("Authorization", "Bearer mk_test_tiny_ws")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(b), `"credits_balance":7`)
	assert.Equal(t, "20", resp.Header.Get("X-RateLimit-Limit"))

	// Bad control input gets the error object too.
	status, body = testkit.Control(t, srv, "POST", "/clock/advance", `{"seconds":-5}`)
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, `"validation_failed"`)
	status, body = testkit.Control(t, srv, "POST", "/clock/set", `{"time":"2020-01-01T00:00:00Z"}`)
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, "backwards")
	status, _ = testkit.Control(t, srv, "GET", "/health", "")
	assert.Equal(t, http.StatusOK, status)
	status, body = testkit.Control(t, srv, "GET", "/openapi.json", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, string(mediamock.ControlDocument), body)
}

func TestForcedResponsesAndLatency(t *testing.T) {
	srv := mediamock.RunT(t)
	status, body := testkit.Control(t, srv, "POST", "/faults/responses", `{"operation":"getAccount","status":503,"count":2}`)
	require.Equal(t, http.StatusOK, status, body)
	testkit.Control(t, srv, "POST", "/faults/responses", `{"operation":"*","status":429}`)
	for _, want := range []string{"service_unavailable", "service_unavailable", "rate_limited"} {
		got := call(srv, "GET", "/account", "")
		assert.Equal(t, want, got["error"].(map[string]any)["code"])
	}
	assert.Equal(t, "account", call(srv, "GET", "/account", "")["object"], "the faults are used up")

	status, body = testkit.Control(t, srv, "PUT", "/faults/latency/listModels", `{"ms":250}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"latency_ms":{"listModels":250}`)
	status, body = testkit.Control(t, srv, "DELETE", "/faults", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"latency_ms":{}`)
}

func TestControlToken(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.ControlToken = "s3cret-token" })
	status, body := testkit.Control(t, srv, "GET", "/clock", "")
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Contains(t, body, "invalid_control_token")
	status, _ = testkit.Control(t, srv, "GET", "/clock", "", "Authorization", "Bearer s3cret-token")
	assert.Equal(t, http.StatusOK, status)
	status, _ = testkit.Control(t, srv, "GET", "/health", "")
	assert.Equal(t, http.StatusOK, status, "the health check needs no token")
}

func TestJournalRecordsAndFilters(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.JournalSize = 3; o.JournalBodyBytes = 16 })
	call(srv, "GET", "/account", "")
	call(srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a long prompt that is cut"}`)
	call(srv, "GET", "/models?modality=3d", "")
	call(srv, "GET", "/nope", "")
	testkit.Control(t, srv, "GET", "/clock", "") // the control API is not recorded

	all := srv.Journal(mediamock.JournalFilter{})
	require.Len(t, all, 3, "the ring keeps the last three")
	assert.Equal(t, "/api/v1/nope", all[0].Path)
	assert.Equal(t, 404, all[0].Status)
	assert.Equal(t, "not_found", all[0].ErrorCode)
	gen := all[2]
	assert.Equal(t, "createGeneration", gen.Operation)
	assert.Equal(t, 201, gen.Status)
	assert.EqualValues(t, 1, gen.WorkspaceID)
	assert.Equal(t, `{"modality":"ima`, gen.RequestBody)
	assert.True(t, gen.RequestBodyTruncated)
	assert.Len(t, gen.ResponseBody, 16)
	assert.Equal(t, "modality=3d", all[1].Query)

	only := srv.Journal(mediamock.JournalFilter{Method: "POST"})
	require.Len(t, only, 1)
	status, body := testkit.Control(t, srv, "GET", "/journal?status=404", "")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `"recorded":4`)
	assert.Contains(t, body, `"path":"/api/v1/nope"`)
	assert.NotContains(t, body, `"createGeneration"`)
	testkit.Control(t, srv, "DELETE", "/journal", "")
	assert.Empty(t, srv.Journal(mediamock.JournalFilter{}))
}

func TestCoverageReport(t *testing.T) {
	var table bytes.Buffer
	srv, err := mediamock.New(mediamock.Options{NoListener: true, CoverageReport: &table})
	require.NoError(t, err)
	call(srv, "GET", "/account", "")
	call(srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"x [mock:fail]","wait_seconds":30}`)
	call(srv, "GET", "/generations/99999", "")

	cov := srv.Coverage()
	statuses := map[string]map[int]int{}
	for _, oc := range cov.Operations {
		statuses[oc.Operation] = map[int]int{}
		for _, sc := range oc.Statuses {
			statuses[oc.Operation][sc.Status] = sc.Count
		}
	}
	assert.Equal(t, 1, statuses["getAccount"][200])
	assert.Equal(t, 0, statuses["getAccount"][401])
	assert.Equal(t, 1, statuses["createGeneration"][201])
	assert.Equal(t, 1, statuses["getGeneration"][404])
	assert.Equal(t, 1, cov.Lifecycle["generation_failed_refunded"])
	assert.Equal(t, 1, cov.Lifecycle["long_poll_waited"])
	assert.Equal(t, 0, cov.Lifecycle["scheduled_publication_started"])
	api, err := contract.Parse("openapi.json", mediamock.OpenAPIDocument)
	require.NoError(t, err)
	operations := 0
	for _, op := range api.Operations() {
		if op.Scope != "" {
			operations++
		}
	}
	assert.Equal(t, operations, cov.Summary.Operations)
	assert.Equal(t, 3, cov.Summary.OperationsExercised)

	require.NoError(t, srv.Close())
	assert.Contains(t, table.String(), "getAccount")
	assert.Contains(t, table.String(), "generation_failed_refunded")
	assert.Contains(t, table.String(), fmt.Sprintf("operations exercised 3/%d", operations))
}

func TestSnapshotRestoreAndReset(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	call(srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"before the snapshot"}`)
	status, snap := testkit.Control(t, srv, "GET", "/snapshot", "")
	require.Equal(t, http.StatusOK, status)
	srv.Advance(time.Hour)
	call(srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"after the snapshot"}`)
	assert.EqualValues(t, 3, len(assetsMatching(srv, "snapshot"))+1)

	status, body := testkit.Control(t, srv, "PUT", "/snapshot", snap, "Content-Type", "application/octet-stream")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"now":"2026-01-05T09:00:00+00:00"`, "the clock of the snapshot")
	assert.Len(t, assetsMatching(srv, "snapshot"), 1)

	status, body = testkit.Control(t, srv, "PUT", "/snapshot", "not a state file", "Content-Type", "application/octet-stream")
	assert.Equal(t, http.StatusBadRequest, status, body)

	status, body = testkit.Control(t, srv, "POST", "/reset", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Empty(t, assetsMatching(srv, "snapshot"))
	assert.EqualValues(t, 5000, call(srv, "GET", "/account", "")["credits_balance"])
}

func assetsMatching(srv *mediamock.Server, q string) []any {
	return call(srv, "GET", "/assets?query="+q, "")["data"].([]any)
}

// Every control route is an operation of control.json (control.json is
// parsed on the first control request that needs it, not at start).
func TestControlRoutesAreInControlJSON(t *testing.T) {
	c, err := testkit.ControlContract()
	require.NoError(t, err)
	for _, op := range control.Routes() {
		assert.True(t, c.Has(op), "control route %s is not in control.json", op)
	}
}

// The Go API reaches what a test needs without the engine: an asset with
// its file's address, and snapshots.
func TestGoAPIAssetsAndSnapshots(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	created := call(srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse"}`)
	id := uint64(created["assets"].([]any)[0].(map[string]any)["id"].(float64))
	a, err := srv.Asset(id)
	require.NoError(t, err)
	assert.Equal(t, "queued", a.Status)
	assert.Empty(t, a.URL, "no file before it completes")
	assert.Equal(t, "a lighthouse", a.Prompt)
	assert.NotZero(t, a.WorkspaceID)

	var snap bytes.Buffer
	n, err := srv.Snapshot(&snap)
	require.NoError(t, err)
	assert.EqualValues(t, snap.Len(), n)

	_, err = srv.RunUntilIdle(time.Hour)
	require.NoError(t, err)
	a, err = srv.Asset(id)
	require.NoError(t, err)
	require.Equal(t, "completed", a.Status)
	assert.Equal(t, "image/png", a.MimeType)
	assert.Equal(t, a.URL+"?download=1", a.DownloadURL)
	resp, err := srv.Client().Get(a.URL)
	require.NoError(t, err)
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "image/png", resp.Header.Get("Content-Type"))
	assert.True(t, bytes.HasPrefix(data, []byte("\x89PNG")), "the file itself")

	require.NoError(t, srv.Restore(&snap))
	a, err = srv.Asset(id)
	require.NoError(t, err)
	assert.Equal(t, "queued", a.Status, "the state of the snapshot")
	assert.Error(t, srv.Restore(strings.NewReader("not a state file")))
	a, err = srv.Asset(id)
	require.NoError(t, err, "a refused snapshot leaves the state as it was")
	assert.Equal(t, "queued", a.Status)
}
