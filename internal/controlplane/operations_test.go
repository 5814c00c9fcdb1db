package controlplane

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/testkit"
	"github.com/mediamock/mediamock/sim"
	"github.com/mediamock/mediamock/spec"
)

var service = sync.OnceValues(func() (*contract.Contract, error) { return contract.ParseEmbedded("openapi.json", spec.OpenAPI) })

func newPlane(t *testing.T, controlToken string) *Plane {
	t.Helper()
	api, err := service()
	require.NoError(t, err)
	eng := testkit.Engine(t)
	rules := fault.NewSet(0)
	return &Plane{Eng: eng, Rules: rules, Service: api, Document: testkit.ControlContract, Journal: journal.New(100, 4096),
		Journals: journal.NewRings(10, 4096), Coverage: &journal.Counts{FaultKinds: fault.Kinds()}, WallClock: time.Now,
		ControlToken: controlToken, Stop: context.Background()}
}

// The parameters of a call are bound as the control API read them: a
// default when absent or not of their type, a pointer present even when
// its value is not of its type, a path parameter from the path.
func TestBindParameters(t *testing.T) {
	var j journalInput
	require.NoError(t, bind(&j, &Call{Query: url.Values{"status": {"429"}, "workspace_id": {"4"}, "front": {"rest"}, "limit": {"x"}}}))
	assert.Equal(t, 429, j.Status)
	assert.Equal(t, uint64(4), j.WorkspaceID)
	assert.Equal(t, "rest", j.Front)
	assert.Equal(t, 100, j.Limit, "a limit not of its type is the default")

	var w waitInput
	require.NoError(t, bind(&w, &Call{Query: url.Values{}}))
	assert.Nil(t, w.After, "absent: the wait is from now on")
	assert.Equal(t, 10.0, w.Timeout)
	require.NoError(t, bind(&w, &Call{Query: url.Values{"after": {""}, "timeout": {"2.5"}}}))
	require.NotNil(t, w.After, "present, even empty")
	assert.Equal(t, int64(0), *w.After)
	assert.Equal(t, 2.5, w.Timeout)

	var p jobsInput
	require.NoError(t, bind(&p, &Call{Query: url.Values{"starting_after": {"9"}}}))
	assert.Equal(t, uint64(9), p.StartingAfter, "the shared paging is bound too")
	assert.Equal(t, 50, p.Limit)

	var g grantInput
	require.NoError(t, bind(&g, &Call{Vars: map[string]string{"id": "3"}, Body: []byte(`{"amount": 100, "note": "n"}`)}))
	assert.Equal(t, uint64(3), g.ID)
	assert.Equal(t, int64(100), g.Body.Amount)
	assert.Equal(t, "n", g.Body.Note)
}

// The body is decoded once, into the handler's type; a body cut short is
// the body's error.
func TestBindBody(t *testing.T) {
	var in failNextInput
	require.NoError(t, bind(&in, &Call{Body: []byte(`{"count": 2, "modality": "video"}`)}))
	assert.Equal(t, 2, in.Rule.Count)
	assert.Equal(t, "video", in.Rule.Modality)
	err := bind(&in, &Call{Body: []byte(`{"count": "two"}`)})
	assert.Equal(t, "invalid_json", sim.AsError(err).Code)
	err = bind(&in, &Call{Body: []byte(`{"co`), BodyErr: &http.MaxBytesError{Limit: 4}})
	assert.Error(t, err)
	assert.True(t, TakesBody("failNext"))
	assert.False(t, TakesBody("getFaults"))
	assert.False(t, TakesBody("getSnapshot"), "not the plane's")
}

// An input with a field that is neither a parameter nor the body is a
// programming error, found at its first call.
func TestBindRefusesAnUntaggedField(t *testing.T) {
	var in struct{ Loose string }
	assert.Panics(t, func() { bind(&in, &Call{}) })
}

// Invoke serves a call without HTTP: the credential, the scope it
// reaches, validation against control.json, the handler.
func TestInvoke(t *testing.T) {
	p := newPlane(t, "operator")
	ctx := context.Background()
	status, body, err := p.Invoke(ctx, &Call{Op: "failNext", Authorization: "Bearer operator", ContentType: "application/json",
		Body: []byte(`{"count": 1, "modality": "video"}`)})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)
	data, _ := json.Marshal(body)
	assert.Contains(t, string(data), `"fail_next":[{"count":1,"modality":"video"`)

	_, _, err = p.Invoke(ctx, &Call{Op: "getFaults", Authorization: "Bearer stranger"})
	assert.Equal(t, "invalid_control_token", sim.AsError(err).Code)

	_, _, err = p.Invoke(ctx, &Call{Op: "failNext", Authorization: "Bearer operator", ContentType: "application/json",
		Body: []byte(`{"count": 0, "nope": 1}`)})
	assert.Equal(t, "validation_failed", sim.AsError(err).Code, "control.json judges the body")

	sb, err := p.CreateSandbox(sim.SandboxSpec{})
	require.NoError(t, err)
	_, _, err = p.Invoke(ctx, &Call{Op: "advanceClock", Authorization: "Bearer " + sb.ControlToken, ContentType: "application/json",
		Body: []byte(`{"seconds": 1}`)})
	assert.Equal(t, "clock_is_shared", sim.AsError(err).Code, "a sandbox's token does not move the shared clock")
	status, _, err = p.Invoke(ctx, &Call{Op: "getFaults", Authorization: "Bearer " + sb.ControlToken})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)

	status, _, err = p.Invoke(ctx, &Call{Op: "getHealth", Authorization: "Bearer stranger"})
	require.NoError(t, err, "the health check needs no credential")
	assert.Equal(t, http.StatusOK, status)

	_, _, err = p.Invoke(ctx, &Call{Op: "getSnapshot", Authorization: "Bearer operator"})
	assert.Equal(t, sim.ENOTFOUND, sim.AsError(err).Kind, "what only HTTP carries is not the plane's: %v", err)
}

// Encode writes an answer as the control API sends it.
func TestEncode(t *testing.T) {
	status, ct, data := Encode(http.StatusCreated, map[string]int{"a": 1}, nil)
	assert.Equal(t, http.StatusCreated, status)
	assert.Equal(t, "application/json", ct)
	assert.JSONEq(t, `{"a":1}`, string(data))
	status, _, data = Encode(0, nil, &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: "No."})
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, string(data), `"code":"not_found"`)
	status, ct, data = Encode(http.StatusOK, Raw{ContentType: "text/plain", Data: []byte("x")}, nil)
	assert.Equal(t, []any{200, "text/plain", "x"}, []any{status, ct, string(data)})
}
