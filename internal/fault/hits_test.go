package fault_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/testkit"
)

// A hitScenario is a rule of a kind, and what meets it: each kind's test
// file adds its own (hit), so that a kind and its test are two files.
type hitScenario struct {
	spec    mediamock.FaultSpec
	provoke func(*testing.T, *mediamock.Server)
}

// hitScenarios are the kinds' scenarios, by kind.
var hitScenarios = map[string]hitScenario{}

// hit adds a kind's scenario, from its test file's init.
func hit(kind string, spec mediamock.FaultSpec, provoke func(*testing.T, *mediamock.Server)) {
	spec.Kind = kind
	hitScenarios[kind] = hitScenario{spec, provoke}
}

// TestEveryKindCountsItsHits: a rule of every registered kind counts the
// requests, jobs or deliveries it targeted (matched) and those it struck
// (hits), as control.json defines them. The test goes over the registry:
// a kind whose test file adds no scenario (hit) fails it.
func TestEveryKindCountsItsHits(t *testing.T) {
	for _, kind := range fault.Kinds() {
		t.Run(kind, func(t *testing.T) {
			sc, ok := hitScenarios[kind]
			require.True(t, ok, "kind %s has no scenario: its test file adds one (hit: a rule of it, and what meets it)", kind)
			srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
			rule, err := srv.AddFault(sc.spec)
			require.NoError(t, err)
			sc.provoke(t, srv)
			f, err := srv.Faults()
			require.NoError(t, err)
			require.Len(t, f.Rules, 1, "the rule stands (it has no first)")
			got := f.Rules[0]
			assert.Equal(t, rule.ID, got.ID)
			assert.GreaterOrEqual(t, got.Hits, int64(1), "the rule struck and counts it")
			assert.GreaterOrEqual(t, got.Matched, got.Hits, "what struck was targeted")
		})
	}
}

// What meets a kind's rule: a request of each class, a job, a delivery.

// onAccount targets the rule at getAccount.
func onAccount(spec mediamock.FaultSpec) mediamock.FaultSpec {
	spec.Operation = "getAccount"
	return spec
}

func getAccount(t *testing.T, srv *mediamock.Server) {
	req, err := http.NewRequest("GET", srv.BaseURL()+"/account", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	if resp, err := srv.Client().Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body) // a broken body is the point
		resp.Body.Close()
	}
}

func download(t *testing.T, srv *mediamock.Server) {
	out := testkit.API(t, srv, "GET", fmt.Sprintf("/assets/%v", 1), "")
	assets, _ := out["assets"].([]any)
	require.Len(t, assets, 1, "%v", out)
	url, _ := assets[0].(map[string]any)["url"].(string)
	require.NotEmpty(t, url, "%v", out)
	require.NoError(t, srv.Advance(2*time.Second))
	if resp, err := srv.Client().Get(url); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func create(t *testing.T, srv *mediamock.Server) {
	testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a heron"}`)
}

func refused(t *testing.T, srv *mediamock.Server) {
	status, body, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a heron"}`)
	require.Equal(t, http.StatusUnprocessableEntity, status, body)
}

func createTwo(t *testing.T, srv *mediamock.Server) {
	testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"two herons","count":2}`)
}

func mcpPost(t *testing.T, srv *mediamock.Server) {
	req, err := http.NewRequest("POST", srv.MCPURL(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
}

// toolCall calls get_account with the official Go SDK in a protocol
// revision ("": the latest, sessionless).
func toolCall(version string) func(*testing.T, *mediamock.Server) {
	return func(t *testing.T, srv *mediamock.Server) {
		mc := sdk.NewClient(&sdk.Implementation{Name: "hits", Version: "1.0.0"}, nil)
		transport := &sdk.StreamableClientTransport{Endpoint: srv.MCPURL(), MaxRetries: -1,
			HTTPClient: &http.Client{Transport: testkit.Bearer{Key: mediamock.KeyAllScopes, Base: srv.Client().Transport}}}
		ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
		defer cancel()
		cs, err := mc.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			return // the session ended under the handshake's last message: met, as the counts say
		}
		defer cs.Close()
		_, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_account", Arguments: map[string]any{}})
	}
}

func publish(t *testing.T, srv *mediamock.Server) {
	testkit.API(t, srv, "POST", "/social/publications", `{"asset_ids":[1],"caption":"a heron","platforms":["instagram"]}`)
}
