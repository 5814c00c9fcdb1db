package control_test

// The one fault store over HTTP: every shorthand endpoint makes a rule that
// GET /_mock/faults lists, counts and clears like any other; the
// simulation's kinds are rules too; a state file of an older version keeps
// its faults as rules.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// faultRule is a rule as GET /_mock/faults lists it.
type faultRule struct {
	ID        string   `json:"id"`
	Via       string   `json:"via"`
	Scope     string   `json:"scope"`
	Kind      string   `json:"kind"`
	Operation string   `json:"operation"`
	First     int      `json:"first"`
	Status    int      `json:"status"`
	MS        *int64   `json:"ms"`
	Rate      *float64 `json:"rate"`
	Platform  string   `json:"platform"`
	Matched   int      `json:"matched"`
	Hits      int      `json:"hits"`
}

type faultsJSON struct {
	Scope         string           `json:"scope"`
	FailNext      []map[string]any `json:"fail_next"`
	FailureRate   *float64         `json:"failure_rate"`
	FailPlatforms []string         `json:"fail_platforms"`
	LatencyMS     map[string]int64 `json:"latency_ms"`
	Forced        []map[string]any `json:"forced_responses"`
	Rules         []faultRule      `json:"rules"`
}

func readFaults(t *testing.T, srv *mediamock.Server, query string) faultsJSON {
	t.Helper()
	status, body := testkit.Control(t, srv, "GET", "/faults"+query, "")
	require.Equal(t, http.StatusOK, status, body)
	var f faultsJSON
	require.NoError(t, json.Unmarshal([]byte(body), &f))
	return f
}

func ruleVia(t *testing.T, f faultsJSON, via string) faultRule {
	t.Helper()
	for _, r := range f.Rules {
		if r.Via == via {
			return r
		}
	}
	t.Fatalf("no rule via %s in %+v", via, f.Rules)
	return faultRule{}
}

// Every shorthand makes a rule of its kind, listed with the others and
// counted as it strikes; the shorthand's own view shows what is left.
func TestShorthandsAreRules(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/faults/fail-next", `{"count":2,"modality":"image"}`},
		{"PUT", "/faults/failure-rate", `{"rate":0}`},
		{"PUT", "/faults/platforms/tiktok", ``},
		{"PUT", "/faults/latency/listModels", `{"ms":1}`},
		{"POST", "/faults/responses", `{"operation":"getAccount","status":503,"count":2}`},
	} {
		status, body := testkit.Control(t, srv, c.method, c.path, c.body)
		require.Equal(t, http.StatusOK, status, "%s %s: %s", c.method, c.path, body)
	}
	f := readFaults(t, srv, "")
	require.Len(t, f.Rules, 5)
	kinds := map[string]string{}
	for _, r := range f.Rules {
		kinds[r.Via] = r.Kind
	}
	assert.Equal(t, map[string]string{"fail-next": "job_failure", "failure-rate": "failure_rate", "platforms": "platform_failure",
		"latency": "latency", "responses": "status"}, kinds)

	// The shorthands' rules strike, and count.
	gen := testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a fox"}`)
	require.Equal(t, "queued", gen["status"], "a doomed job is created as any other")
	testkit.API(t, srv, "GET", "/models", "")
	got := testkit.API(t, srv, "GET", "/account", "")
	assert.Equal(t, "service_unavailable", got["error"].(map[string]any)["code"])

	f = readFaults(t, srv, "")
	failNext := ruleVia(t, f, "fail-next")
	assert.Equal(t, 1, failNext.Hits, "one job met the rule")
	require.Len(t, f.FailNext, 1)
	assert.EqualValues(t, 1, f.FailNext[0]["count"], "one more job fails")
	rate := ruleVia(t, f, "failure-rate")
	assert.Equal(t, 0, rate.Matched, "the fail-next rule decided the job first")
	assert.Equal(t, 1, ruleVia(t, f, "latency").Hits)
	assert.Equal(t, 1, ruleVia(t, f, "responses").Hits)
	assert.EqualValues(t, 1, f.Forced[0]["remaining"])
	assert.Equal(t, map[string]int64{"listModels": 1}, f.LatencyMS)
	assert.Equal(t, []string{"tiktok"}, f.FailPlatforms)

	// The job fails when its time comes, with its credits refunded.
	testkit.Control(t, srv, "POST", "/clock/advance", `{"duration":"10m"}`)
	id := int(gen["assets"].([]any)[0].(map[string]any)["id"].(float64))
	assert.Equal(t, "failed", testkit.API(t, srv, "GET", fmt.Sprintf("/assets/%d", id), "")["status"])

	// A shorthand set again replaces its rule; deleting a shorthand's rule
	// by id takes it from the shorthand's view too.
	testkit.Control(t, srv, "PUT", "/faults/latency/listModels", `{"ms":5}`)
	f = readFaults(t, srv, "")
	assert.Equal(t, map[string]int64{"listModels": 5}, f.LatencyMS)
	status, body := testkit.Control(t, srv, "DELETE", "/faults/rules/"+ruleVia(t, f, "platforms").ID, "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Empty(t, readFaults(t, srv, "").FailPlatforms)
	status, body = testkit.Control(t, srv, "DELETE", "/faults", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Empty(t, readFaults(t, srv, "").Rules)
}

// The simulation's kinds are rules like the others: added with POST
// /faults/rules, targeted, counted.
func TestSimulationKindsAsRules(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	for _, spec := range []string{
		`{"kind":"job_failure","modality":"video","first":1,"stage":"queued","code":"provider_unavailable"}`,
		`{"kind":"platform_failure","platform":"all"}`,
	} {
		status, body := testkit.Control(t, srv, "POST", "/faults/rules", spec)
		require.Equal(t, http.StatusCreated, status, body)
	}
	img := testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"not targeted"}`)
	vid := testkit.API(t, srv, "POST", "/generations", `{"modality":"video","model_id":"veo-3-fast","prompt":"targeted","duration":4}`)
	testkit.Control(t, srv, "POST", "/clock/advance", `{"duration":"1h"}`)
	asset := func(g map[string]any) map[string]any {
		id := int(g["assets"].([]any)[0].(map[string]any)["id"].(float64))
		return testkit.API(t, srv, "GET", fmt.Sprintf("/assets/%d", id), "")
	}
	assert.Equal(t, "completed", asset(img)["status"])
	v := asset(vid)
	require.Equal(t, "failed", v["status"], "%v", v)
	assert.Equal(t, "provider_unavailable", v["assets"].([]any)[0].(map[string]any)["error"].(map[string]any)["code"], "%v", v)

	f := readFaults(t, srv, "")
	require.Len(t, f.Rules, 1, "the job_failure rule is spent")
	assert.Equal(t, "platform_failure", f.Rules[0].Kind)
	assert.Empty(t, f.FailPlatforms, "a rule added as one is not a shorthand's")

	// Refused: what the simulation's kinds do not take, and a header.
	for _, spec := range []string{
		`{"kind":"failure_rate","rate":0.5,"operation":"getAccount"}`,
		`{"kind":"failure_rate"}`,
		`{"kind":"platform_failure","platform":"myspace"}`,
		`{"kind":"job_failure","stage":"done"}`,
		`{"kind":"job_failure","class":"api"}`,
	} {
		status, body := testkit.Control(t, srv, "POST", "/faults/rules", spec)
		assert.Equal(t, http.StatusBadRequest, status, "%s: %s", spec, body)
	}
	status, _, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", "/account", nil)
	require.Equal(t, http.StatusOK, status)
	resp, body := testkit.Send(t, srv, "GET", "/api/v1/account", "", map[string]string{
		"Authorization": "Bearer " + mediamock.KeyAllScopes, "Mock-Fault": "job_failure"}, "")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	assert.Contains(t, body, "decided in the simulation")
}

// A request's own Mock-Fault header takes the place of the rules at its
// stage alone: a forced response still answers a request that asks for a
// latency.
func TestHeaderReplacesTheRulesAtItsStageOnly(t *testing.T) {
	srv := mediamock.RunT(t)
	status, body := testkit.Control(t, srv, "POST", "/faults/responses", `{"operation":"getAccount","status":503}`)
	require.Equal(t, http.StatusOK, status, body)
	resp, body := testkit.Send(t, srv, "GET", "/api/v1/account", "", map[string]string{
		"Authorization": "Bearer " + mediamock.KeyAllScopes, "Mock-Fault": "latency; distribution=fixed; ms=0"}, "")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, body)
	entries := srv.Journal(mediamock.JournalFilter{Operation: "getAccount"})
	require.Len(t, entries, 1)
	assert.Equal(t, "status,latency", entries[0].Fault, "both met, in the order of their stages")
	assert.Equal(t, "flt_1,header", entries[0].FaultRule)
}

// A state file of an older version kept its faults in itself: the server
// takes them over as the shorthands' rules when it opens the file, and the
// file keeps them no more.
func TestOlderStateFileKeepsItsFaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	srv, err := mediamock.New(mediamock.Options{DBPath: path, NoListener: true})
	require.NoError(t, err)
	require.NoError(t, srv.Close())

	// What an older version wrote: the global faults under "state", a
	// workspace's under its id.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("faults"))
		require.NotNil(t, b, "the file has the faults bucket")
		if err := b.Put([]byte("state"), []byte(`{"fail_next":[{"count":2,"modality":"video"}],"failure_rate":0.5,"fail_platforms":["x"]}`)); err != nil {
			return err
		}
		return b.Put([]byte{0, 0, 0, 0, 0, 0, 0, 2}, []byte(`{"fail_platforms":["all"]}`))
	}))
	require.NoError(t, db.Close())

	srv = mediamock.RunT(t, func(o *mediamock.Options) { o.DBPath = path })
	f := readFaults(t, srv, "")
	require.Len(t, f.FailNext, 1)
	assert.EqualValues(t, 2, f.FailNext[0]["count"])
	assert.Equal(t, "video", f.FailNext[0]["modality"])
	require.NotNil(t, f.FailureRate)
	assert.Equal(t, 0.5, *f.FailureRate)
	assert.Equal(t, []string{"x"}, f.FailPlatforms)
	assert.Equal(t, []string{"all"}, readFaults(t, srv, "?workspace_id=2").FailPlatforms)
	require.NoError(t, srv.Close())

	// Taken over once: the file holds them no more.
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.View(func(tx *bolt.Tx) error {
		assert.Zero(t, tx.Bucket([]byte("faults")).Stats().KeyN)
		return nil
	}))
}

// A sandbox's fault list says what strikes it, as control.json's Faults
// describes rules: its own rules, then the global ones, marked as such. The
// shorthands' views show its own alone, and its own list ends its own.
func TestSandboxFaultListShowsWhatStrikesIt(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Description string `json:"description"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(mediamock.ControlDocument, &doc))
	described := doc.Components.Schemas["Faults"].Properties["rules"].Description
	require.Contains(t, described, "the scope's own rules, in the order they were added, then, for a sandbox or a workspace, the global ones, marked `scope: global`")

	srv := mediamock.RunT(t)
	sb := createSandbox(t, srv, `{}`)
	q := "?sandbox=" + sb.ID
	for _, c := range []struct{ path, body string }{
		{"/faults/rules", `{"kind":"status","status":500,"operation":"listModels"}`},
		{"/faults/rules" + q, `{"kind":"reset","operation":"getAccount"}`},
		{"/faults/fail-next", `{"count":1}`},
		{"/faults/fail-next" + q, `{"count":2}`},
	} {
		status, body := testkit.Control(t, srv, "POST", c.path, c.body)
		require.Less(t, status, 300, "%s: %s", c.path, body)
	}
	own := readFaults(t, srv, q)
	require.Len(t, own.Rules, 4)
	var kinds, scopes []string
	for _, r := range own.Rules {
		kinds = append(kinds, r.Kind)
		scopes = append(scopes, r.Scope)
	}
	assert.Equal(t, []string{"reset", "job_failure", "status", "job_failure"}, kinds, "its own in order, then the global ones")
	assert.Equal(t, []string{"", "", "global", "global"}, scopes)
	require.Len(t, own.FailNext, 1, "the shorthand's view is its own")
	assert.EqualValues(t, 2, own.FailNext[0]["count"])

	// The order is the order they strike in: the sandbox's status rule
	// would come before the global one, had it one.
	global := readFaults(t, srv, "")
	require.Len(t, global.Rules, 2, "the global list holds the global rules alone")
	for _, r := range global.Rules {
		assert.Empty(t, r.Scope)
	}
	// A global rule is deleted from the global scope, not the sandbox's.
	status, body := testkit.Control(t, srv, "DELETE", "/faults/rules/"+own.Rules[2].ID+q, "")
	assert.Equal(t, http.StatusNotFound, status, body)
}
