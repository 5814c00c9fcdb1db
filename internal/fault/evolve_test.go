package fault_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/testkit"
	"github.com/mediamock/mediamock/spec"
)

func init() { hit(fault.Evolve, onAccount(mediamock.FaultSpec{}), getAccount) }

// relaxed is openapi.json as a client of the next additive release reads
// it: every object open to fields it does not declare, and the enums that
// evolve (status, kind, modality) open to values it does not list.
func relaxed(t *testing.T) *contract.Contract {
	t.Helper()
	return document(t, true)
}

// document is openapi.json, relaxed or as it is.
func document(t *testing.T, relax bool) *contract.Contract {
	t.Helper()
	data := spec.OpenAPI
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	var walk func(any)
	walk = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			if ap, ok := n["additionalProperties"].(bool); ok && !ap {
				delete(n, "additionalProperties")
			}
			if props, ok := n["properties"].(map[string]any); ok {
				for _, name := range []string{"status", "kind", "modality"} {
					if p, ok := props[name].(map[string]any); ok {
						delete(p, "enum")
					}
				}
			}
			for _, v := range n {
				walk(v)
			}
		case []any:
			for _, v := range n {
				walk(v)
			}
		}
	}
	if !relax {
		c, err := contract.Parse("openapi.json", data)
		require.NoError(t, err)
		return c
	}
	walk(doc)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{"JobStatus", "PublicationStatus", "AssetKind", "Modality"} {
		delete(schemas[name].(map[string]any), "enum")
	}
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	c, err := contract.Parse("relaxed openapi.json", out)
	require.NoError(t, err)
	return c
}

type evolvedExchange struct {
	req    *http.Request
	status int
	header http.Header
	body   []byte
}

// tour calls most operations of the service, successes and errors.
func tour(t *testing.T, srv *mediamock.Server, key string) []evolvedExchange {
	t.Helper()
	var out []evolvedExchange
	do := func(method, path, body string) map[string]any {
		req, err := http.NewRequest(method, srv.BaseURL()+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		out = append(out, evolvedExchange{req, resp.StatusCode, resp.Header, data})
		var v map[string]any
		require.NoError(t, json.Unmarshal(data, &v), "%s %s: %s", method, path, data)
		return v
	}
	do("GET", "/account", "")
	do("GET", "/models", "")
	gen := do("POST", "/generations", `{"modality":"image","model_id":"flux-2-pro","prompt":"a fox","count":2}`)
	id := gen["assets"].([]any)[0].(map[string]any)["id"]
	idPath := "/" + strings.TrimSuffix(strings.TrimSuffix(jsonString(id), "\n"), ".0")
	do("POST", "/generations", `{"modality":"video","model_id":"veo-3.1","prompt":"waves"}`)
	do("GET", "/generations"+idPath, "")
	do("GET", "/generations"+idPath+"?wait_seconds=55", "")
	do("GET", "/assets?limit=5", "")
	do("GET", "/assets"+idPath, "")
	do("GET", "/assets/999999", "")
	do("POST", "/generations", `{"modality":"image","model_id":"flux-2-pro"}`)
	do("POST", "/generations", `{"modality":"image","model_id":"flux-2-pro","prompt":"a fox [mock:moderation]"}`)
	for _, p := range []string{"/projects", "/characters", "/brand_kits", "/social/accounts", "/social/publications", "/encore/effects"} {
		do("GET", p, "")
	}
	return out
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }

// Every evolved answer is valid against the relaxed document, and the
// journal names what was added: the evolution is additive. Against the
// document itself, the new enum values are what a strict client meets.
func TestEvolvedAnswersAreAdditive(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.NoListener, o.Evolve = true, true })
	loose, strict := relaxed(t), document(t, false)
	exchanges := tour(t, srv, mediamock.KeyAllScopes)
	entries := srv.Journal(mediamock.JournalFilter{Front: "rest"})
	require.Len(t, entries, len(exchanges))
	unknownEnums, statuses := 0, map[int]bool{}
	for i, x := range exchanges {
		e := entries[len(entries)-1-i]
		statuses[x.status] = true
		assert.NoError(t, loose.CheckExchange(x.req, x.status, x.header, x.body), "%s %s", x.req.Method, x.req.URL)
		if strict.CheckExchange(x.req, x.status, x.header, x.body) != nil {
			unknownEnums++
		}
		require.NotEmpty(t, e.Evolved, "%s %s", e.Method, e.Path)
		assert.Equal(t, "evolve", e.Fault)
		assert.Equal(t, "server", e.FaultRule)
		var sawField, sawHeader bool
		for _, a := range e.Evolved {
			if name, ok := strings.CutPrefix(a, "header "); ok {
				sawHeader = true
				assert.NotEmpty(t, x.header.Get(name), a)
			} else if !strings.Contains(a, " ") {
				sawField = true
				field := a[strings.LastIndex(a, ".")+1:]
				assert.Contains(t, string(x.body), `"`+field+`":`, a)
			}
		}
		assert.True(t, sawField && sawHeader, "%s %s: %v", e.Method, e.Path, e.Evolved)
		if !e.ResponseBodyTruncated {
			assert.Equal(t, string(x.body), e.ResponseBody, "the journal keeps the answer as it was sent")
		}
	}
	assert.Positive(t, unknownEnums, "some answers carry a value the document does not list")
	assert.True(t, statuses[200] && statuses[201] && statuses[400] && statuses[404] && statuses[422], "successes and errors: %v", statuses)
}

// What evolves is the bytes on the way out: the simulation's own state
// keeps its values.
func TestEvolveLeavesTheStateAlone(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual), func(o *mediamock.Options) { o.NoListener, o.Evolve = true, true })
	var kinds, statuses []string
	for range 20 {
		_, gen, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "POST", "/generations", `{"modality":"image","model_id":"flux-2-pro","prompt":"a fox","count":2}`)
		for _, a := range gen["assets"].([]any) {
			asset := a.(map[string]any)
			kinds, statuses = append(kinds, asset["kind"].(string)), append(statuses, asset["status"].(string))
			stored, err := srv.Asset(uint64(asset["id"].(float64)))
			require.NoError(t, err)
			assert.Equal(t, "image", stored.Kind)
			assert.Contains(t, []string{"queued", "processing"}, stored.Status)
		}
	}
	assert.Contains(t, kinds, "sticker", "the answers carried the new kind")
	assert.Contains(t, append(statuses, gen0(t, srv)...), "moderating")
}

// gen0 reads one running generation, whose status may evolve.
func gen0(t *testing.T, srv *mediamock.Server) []string {
	var out []string
	for range 10 {
		_, gen, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "POST", "/generations", `{"modality":"image","model_id":"flux-2-pro","prompt":"a fox"}`)
		out = append(out, gen["status"].(string))
	}
	return out
}

// Same seed, same requests: the same evolution, byte for byte.
func TestEvolveFollowsTheSeed(t *testing.T) {
	run := func() []evolvedExchange {
		srv := mediamock.RunT(t, func(o *mediamock.Options) { o.NoListener, o.Evolve = true, true })
		return tour(t, srv, mediamock.KeyAllScopes)
	}
	a, b := run(), run()
	require.Len(t, b, len(a))
	for i := range a {
		assert.Equal(t, string(a[i].body), string(b[i].body))
		for _, h := range []string{"X-Service-Region", "X-Api-Minor-Version", "Server-Timing"} {
			assert.Equal(t, a[i].header.Get(h), b[i].header.Get(h), h)
		}
	}
}

// A rule evolves its scope alone, with the parts it asks for; a header
// evolves its request; nothing evolves without either.
func TestEvolveRuleAndHeader(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.NoListener = true })
	sb := srv.Sandbox(t)
	rule, err := sb.AddFault(mediamock.FaultSpec{Kind: "evolve", Enums: new(false), Headers: new(false)})
	require.NoError(t, err)

	status, body := testkit.Control(t, srv, "GET", "/faults?sandbox="+sb.ID, "")
	require.Equal(t, 200, status)
	assert.Contains(t, body, `"kind":"evolve"`)

	_, _, hs := testkit.REST(t, srv, sb.APIKey, "GET", "/models", nil)
	_, _, hp := testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", "/models", nil)
	assert.Empty(t, hs.Get("X-Service-Region")+hs.Get("X-Api-Minor-Version")+hs.Get("Server-Timing"), "headers off")
	mine, all := sb.Journal(mediamock.JournalFilter{}), srv.Journal(mediamock.JournalFilter{})
	require.Len(t, mine, 1)
	assert.Equal(t, rule.ID, mine[0].FaultRule)
	for _, a := range mine[0].Evolved {
		assert.NotContains(t, a, "(was", "enums off")
		assert.False(t, strings.HasPrefix(a, "header "), "headers off")
	}
	assert.Contains(t, mine[0].Evolved, "keys reordered")
	for _, e := range all {
		if e.SandboxID == "" {
			assert.Empty(t, e.Evolved, "another workspace meets no sandbox's rule")
		}
	}
	assert.Empty(t, hp.Get("X-Service-Region")+hp.Get("X-Api-Minor-Version")+hp.Get("Server-Timing"))

	resp, raw := testkit.Send(t, srv, "GET", "/api/v1/account", "", map[string]string{
		"Authorization": "Bearer " + mediamock.KeyAllScopes, "Mock-Fault": "evolve; fields=false; enums=false; reorder=false"}, "")
	require.Equal(t, 200, resp.StatusCode)
	_, plain := testkit.Send(t, srv, "GET", "/api/v1/account", "", map[string]string{"Authorization": "Bearer " + mediamock.KeyAllScopes}, "")
	assert.Equal(t, plain, raw, "the body is as it was")
	e := srv.Journal(mediamock.JournalFilter{Limit: 2})[1]
	assert.Equal(t, "header", e.FaultRule)
	require.NotEmpty(t, e.Evolved)
	for _, a := range e.Evolved {
		assert.True(t, strings.HasPrefix(a, "header "), a)
	}
}

func TestBadEvolveSpecs(t *testing.T) {
	srv := mediamock.RunT(t)
	for _, tc := range []struct{ body, field string }{
		{`{"kind":"evolve","fields":false,"enums":false,"headers":false,"reorder":false}`, "fields"},
		{`{"kind":"evolve","class":"files"}`, "class"},
		{`{"kind":"evolve","class":"mcp"}`, "class"},
		{`{"kind":"evolve","ms":5}`, "ms"},
		{`{"kind":"truncate","reorder":false}`, "reorder"},
	} {
		status, body := testkit.Control(t, srv, "POST", "/faults/rules", tc.body)
		assert.Equal(t, 400, status, tc.body)
		assert.Contains(t, body, `"field":"`+tc.field+`"`, "%s names %s: %s", tc.body, tc.field, body)
	}
	status, body := testkit.Control(t, srv, "POST", "/faults/rules", `{"kind":"evolve","fields":"no"}`)
	assert.Equal(t, 400, status, body)
	for _, tc := range []struct{ header, reason string }{
		{"evolve; fields=maybe", "true or false"},
		{"evolve; fields=false; enums=false; headers=false; reorder=false", "nothing would evolve"},
	} {
		resp, body := testkit.Send(t, srv, "GET", "/api/v1/account", "", map[string]string{"Mock-Fault": tc.header, "Authorization": "Bearer " + mediamock.KeyAllScopes}, "")
		assert.Equal(t, 400, resp.StatusCode, tc.header)
		assert.Contains(t, body, tc.reason, tc.header)
	}
	f, err := srv.Faults()
	require.NoError(t, err)
	assert.Empty(t, f.Rules)
}
