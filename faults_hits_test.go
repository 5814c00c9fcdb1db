package mediamock_test

import (
	"context"
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

// TestEveryKindCountsItsHits: a rule of every kind of the kind table counts
// the requests, jobs or deliveries it targeted (matched) and those it struck
// (hits), as control.json defines them. The test goes over the table: a kind
// without a scenario here fails it.
func TestEveryKindCountsItsHits(t *testing.T) {
	one, zero := int64(1), int64(0)
	getAccount := func(t *testing.T, srv *mediamock.Server) {
		req, err := http.NewRequest("GET", srv.BaseURL()+"/account", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
		if resp, err := srv.Client().Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body) // a broken body is the point
			resp.Body.Close()
		}
	}
	download := func(t *testing.T, srv *mediamock.Server) {
		url := assetURL(t, srv, 1)
		require.NoError(t, srv.Advance(2*time.Second))
		if resp, err := srv.Client().Get(url); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	create := func(t *testing.T, srv *mediamock.Server) {
		testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a heron"}`)
	}
	refused := func(t *testing.T, srv *mediamock.Server) {
		status, body, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a heron"}`)
		require.Equal(t, http.StatusUnprocessableEntity, status, body)
	}
	createTwo := func(t *testing.T, srv *mediamock.Server) {
		testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"two herons","count":2}`)
	}
	mcpPost := func(t *testing.T, srv *mediamock.Server) {
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
	toolCall := func(version string) func(*testing.T, *mediamock.Server) {
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
	publish := func(t *testing.T, srv *mediamock.Server) {
		testkit.API(t, srv, "POST", "/social/publications", `{"asset_ids":[1],"caption":"a heron","platforms":["instagram"]}`)
	}
	onAccount := func(spec mediamock.FaultSpec) mediamock.FaultSpec { spec.Operation = "getAccount"; return spec }

	scenarios := map[string]struct {
		spec    mediamock.FaultSpec
		provoke func(*testing.T, *mediamock.Server)
	}{
		fault.Reset:               {onAccount(mediamock.FaultSpec{Kind: fault.Reset}), getAccount},
		fault.EmptyReply:          {onAccount(mediamock.FaultSpec{Kind: fault.EmptyReply}), getAccount},
		fault.Truncate:            {onAccount(mediamock.FaultSpec{Kind: fault.Truncate}), getAccount},
		fault.SlowBody:            {onAccount(mediamock.FaultSpec{Kind: fault.SlowBody, BytesPerSecond: 1 << 30}), getAccount},
		fault.Garbage:             {onAccount(mediamock.FaultSpec{Kind: fault.Garbage}), getAccount},
		fault.Latency:             {onAccount(mediamock.FaultSpec{Kind: fault.Latency, Distribution: "fixed", MS: &zero}), getAccount},
		fault.Status:              {onAccount(mediamock.FaultSpec{Kind: fault.Status, Status: 503}), getAccount},
		fault.Evolve:              {onAccount(mediamock.FaultSpec{Kind: fault.Evolve}), getAccount},
		fault.FileExpiry:          {mediamock.FaultSpec{Kind: fault.FileExpiry, TTLSeconds: &one}, download},
		fault.FileTruncate:        {mediamock.FaultSpec{Kind: fault.FileTruncate}, download},
		fault.MCPSessionExpire:    {mediamock.FaultSpec{Kind: fault.MCPSessionExpire}, toolCall("2025-11-25")},
		fault.MCPStreamDrop:       {mediamock.FaultSpec{Kind: fault.MCPStreamDrop, Operation: "getAccount"}, toolCall("")},
		fault.MCPUnavailable:      {mediamock.FaultSpec{Kind: fault.MCPUnavailable}, mcpPost},
		fault.JobFailure:          {mediamock.FaultSpec{Kind: fault.JobFailure}, create},
		fault.FailureRate:         {mediamock.FaultSpec{Kind: fault.FailureRate, Rate: new(1.0)}, create},
		fault.PlatformFailure:     {mediamock.FaultSpec{Kind: fault.PlatformFailure, Platform: "instagram"}, publish},
		fault.Moderation:          {mediamock.FaultSpec{Kind: fault.Moderation}, refused},
		fault.OutputFailure:       {mediamock.FaultSpec{Kind: fault.OutputFailure}, createTwo},
		fault.AccountDisconnected: {mediamock.FaultSpec{Kind: fault.AccountDisconnected, Platform: "instagram"}, publish},
	}
	for _, kind := range fault.Kinds {
		t.Run(kind, func(t *testing.T) {
			sc, ok := scenarios[kind]
			require.True(t, ok, "kind %s has no scenario here: add one (a rule of it, and what meets it)", kind)
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
