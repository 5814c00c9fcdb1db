package mediamock_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/sim"
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

// The real clock follows wall time (here a fake one the test moves).
func TestRealClockFollowsWallTime(t *testing.T) {
	wall := time.Date(2030, 3, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return wall }
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = sim.ClockReal; o.WallClock = now })
	assert.Equal(t, wall, srv.Now(), "a new simulation starts at wall time")

	req, _ := http.NewRequest("POST", srv.BaseURL()+"/generations", strings.NewReader(`{"modality":"image","model_id":"imagen-4","prompt":"x [mock:delay=30]"}`))
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()

	mu.Lock()
	wall = wall.Add(31 * time.Second)
	mu.Unlock()
	assert.Equal(t, time.Date(2030, 3, 1, 12, 0, 31, 0, time.UTC), srv.Now())
	require.NoError(t, srv.Engine().Settle(), "what the driver does when the timer fires")
	pg, err := srv.Engine().ListAssets(sim.Principal{WorkspaceID: 1}, sim.AssetQuery{Query: "mock:delay", Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, sim.StatusCompleted, pg.Data[0].Status)
}
