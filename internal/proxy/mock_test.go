package proxy_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/conformance"
	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/testkit"
)

// TestThroughProxyOfTheMock puts the proxy in front of this mock and runs
// a broad scenario through it: the conformance suite, then uploads (JSON
// and multipart), charged generations polled to the end, file downloads.
// The mock keeps every rule, so the proxy finds nothing.
func TestThroughProxyOfTheMock(t *testing.T) {
	srv := mediamock.RunT(t)
	f := startProxy(t, srv.BaseURL())
	client := f.srv.Client()

	rep := conformance.Run(t, conformance.Config{
		BaseURL: f.base(), Client: client, SpendCredits: true,
		Keys: conformance.Keys{Read: mediamock.KeyReadOnly, Generate: mediamock.KeyGenerateOnly, Publish: mediamock.KeyPublishOnly, All: mediamock.KeyAllScopes},
		Wait: func(_ context.Context, d time.Duration) error { return srv.Advance(d) },
	})
	assert.Zero(t, rep.Failed(), rep.Table())

	key := mediamock.KeyAllScopes
	getJSON(t, client, f.base()+"/account", key)
	up := postJSON(t, client, f.base()+"/uploads", key, map[string]any{"image_url": testkit.DataURI("image/png", testkit.PNG(t, 64, 48)), "title": "through the proxy.png"})
	require.Equal(t, http.StatusCreated, up.Status, "%s", up.Body)
	body, ct := multipartUpload(t, testkit.PNG(t, 32, 32), "multipart through the proxy.png")
	mp := do(t, client, http.MethodPost, f.base()+"/uploads", key, body, ct)
	require.Equal(t, http.StatusCreated, mp.Status, "%s", mp.Body)
	var ids []int64
	for range 2 {
		g := postJSON(t, client, f.base()+"/generations", key, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "a lighthouse at dusk, through the proxy", "count": 2})
		require.Equal(t, http.StatusCreated, g.Status, "%s", g.Body)
		ids = append(ids, int64(g.JSON(t)["assets"].([]any)[0].(map[string]any)["id"].(float64)))
	}
	for _, id := range ids {
		for status := ""; status != "completed" && status != "failed"; {
			r := getJSON(t, client, fmt.Sprintf("%s/generations/%d?wait_seconds=55", f.base(), id), key)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			status = r.JSON(t)["status"].(string)
		}
	}
	r := getJSON(t, client, fmt.Sprintf("%s/assets/%d", f.base(), ids[0]), key)
	a := r.JSON(t)["assets"].([]any)[0].(map[string]any)
	require.Equal(t, "completed", a["status"])
	// The file's address is the mock's; through the proxy it is the same path.
	file := strings.Replace(a["url"].(string), srv.URL(), f.srv.URL, 1)
	direct := do(t, srv.Client(), http.MethodGet, a["url"].(string), "", nil, "")
	through := do(t, client, http.MethodGet, file, "", nil, "")
	require.Equal(t, http.StatusOK, through.Status)
	assert.Equal(t, direct.Body, through.Body, "a file passes through unchanged")
	getJSON(t, client, f.base()+"/assets?limit=50", key)
	getJSON(t, client, f.base()+"/openapi.json", key)
	do(t, client, http.MethodDelete, f.base()+"/account", key, nil, "")
	getJSON(t, client, f.base()+"/account", "mk_test_not_a_key_at_all")
	getJSON(t, client, f.base()+"/openapi.json", "mk_test_not_a_key_at_all")
	getJSON(t, client, f.base()+"/nothing/here", "mk_test_not_a_key_at_all")

	var table strings.Builder
	f.p.WriteSummary(&table)
	t.Log(table.String())
	s := f.p.Summary()
	assert.Zero(t, s.Violations, "report:\n%s", f.report.String())
	assert.Zero(t, s.WithViolations)
	assert.Zero(t, s.Drift, "the mock sends only what openapi.json declares")
	assert.Zero(t, s.Skipped)
	assert.Greater(t, s.Exchanges, 60)
	assert.Equal(t, 1, s.Others)
	applied := map[string]int{}
	for _, r := range s.Rules {
		applied[r.Rule] = r.Applied
	}
	for _, rule := range []string{check.RuleRequest, check.RuleBody, check.RuleRateHeaders, check.RuleErrorObject, check.RuleStatusOrder, check.RuleListOrder, check.RuleOperation} {
		assert.Positive(t, applied[rule], rule)
	}
	assert.GreaterOrEqual(t, applied[check.RuleBalance], 2, "both charged creations are held to the balance")
	assert.Empty(t, f.report.String())
	for _, k := range []string{mediamock.KeyAllScopes, mediamock.KeyReadOnly, mediamock.KeyGenerateOnly, mediamock.KeyPublishOnly} {
		assert.NotContains(t, f.log.String(), k)
	}
}

// TestConcurrentTraffic: creations, long polls and lists of one workspace
// at once through the proxy. Overlapping calls are never compared, so a
// conforming server gives no violation however they interleave.
func TestConcurrentTraffic(t *testing.T) {
	srv := mediamock.RunT(t)
	f := startProxy(t, srv.BaseURL())
	client := f.srv.Client()
	key := mediamock.KeyAllScopes
	getJSON(t, client, f.base()+"/account", key)
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			g := postJSON(t, client, f.base()+"/generations", key, map[string]any{"modality": "image", "model_id": "seedream-4", "prompt": fmt.Sprintf("concurrent %d", i)})
			if g.Status != http.StatusCreated {
				t.Errorf("create: %d %s", g.Status, g.Body)
				return
			}
			id := int64(g.JSON(t)["assets"].([]any)[0].(map[string]any)["id"].(float64))
			for status := ""; status != "completed" && status != "failed"; {
				r := getJSON(t, client, fmt.Sprintf("%s/assets/%d?wait_seconds=20", f.base(), id), key)
				if r.Status != http.StatusOK {
					t.Errorf("poll: %d %s", r.Status, r.Body)
					return
				}
				status = r.JSON(t)["status"].(string)
				getJSON(t, client, f.base()+"/assets?limit=10", mediamock.KeyReadOnly)
			}
		})
	}
	wg.Wait()
	getJSON(t, client, f.base()+"/account", key)
	s := f.p.Summary()
	assert.Zero(t, s.Violations, "report:\n%s", f.report.String())
	assert.GreaterOrEqual(t, s.Exchanges, 20)
}

// TestEvolveIsDriftNotViolation puts the proxy in front of the mock in
// evolve mode (the service's next additive release rehearsed): every new
// field, enum value and header it adds is reported as drift, with its
// path and operation, and none of it as a violation. The two features
// check each other: the mock's evolution stays additive, and the checker
// sees every kind of it.
func TestEvolveIsDriftNotViolation(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithEvolve())
	f := startProxy(t, srv.BaseURL())
	client := f.srv.Client()
	key := mediamock.KeyAllScopes
	getJSON(t, client, f.base()+"/account", key)
	getJSON(t, client, f.base()+"/models", key)
	g := postJSON(t, client, f.base()+"/generations", key, map[string]any{"modality": "image", "model_id": "imagen-4", "prompt": "a lighthouse at dusk, evolved"})
	require.Equal(t, http.StatusCreated, g.Status, "%s", g.Body)
	id := int64(g.JSON(t)["assets"].([]any)[0].(map[string]any)["id"].(float64))
	for status := ""; status != "completed" && status != "failed"; {
		r := getJSON(t, client, fmt.Sprintf("%s/generations/%d?wait_seconds=55", f.base(), id), key)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		status = r.JSON(t)["status"].(string)
	}
	for range 5 {
		getJSON(t, client, f.base()+"/assets?limit=20", key)
	}
	getJSON(t, client, f.base()+"/assets/999999", key) // a 404, its code evolved

	var table strings.Builder
	f.p.WriteSummary(&table)
	t.Log(table.String())
	s := f.p.Summary()
	assert.Zero(t, s.Violations, "evolution is additive:\n%s", f.report.String())
	kinds := map[string]int{}
	for _, k := range s.DriftByKind {
		kinds[k.Kind] = k.Count
	}
	for _, kind := range []string{check.DriftField, check.DriftEnum, check.DriftHeader} {
		assert.Positive(t, kinds[kind], "drift of kind %s\n%s", kind, f.report.String())
	}
	assert.Zero(t, kinds[check.DriftStatus], "evolve never changes a status")
	places := map[string]bool{}
	for _, d := range s.DriftByPlace {
		places[d.Operation] = true
		assert.NotEmpty(t, d.Path)
	}
	for _, op := range []string{"getAccount", "createGeneration", "listAssets"} {
		assert.True(t, places[op], "drift of %s is named by its operation: %+v", op, s.DriftByPlace)
	}
	// And the journal names what the mock added, as the proxy saw it.
	entries := srv.Controls.Journal(mediamock.JournalFilter{})
	evolved := 0
	for _, e := range entries {
		evolved += len(e.Evolved)
	}
	assert.Positive(t, evolved)
}
