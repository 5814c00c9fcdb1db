package mcp

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/front"
	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/sim"
)

// TestCheckJudgesToolResultsByTheOperationsResponse: in strict mode a
// tool's result is checked as the REST response it stands for.
func TestCheckJudgesToolResultsByTheOperationsResponse(t *testing.T) {
	doc, err := os.ReadFile("../../openapi.json")
	require.NoError(t, err)
	api, err := contract.Parse("openapi.json", doc)
	require.NoError(t, err)
	f := &Front{env: &front.Env{API: api}}
	f.tools, err = buildTools(f.env)
	require.NoError(t, err)
	var account *tool
	for _, tl := range f.tools {
		if tl.def.Name == "get_account" {
			account = tl
		}
	}
	require.NotNil(t, account)
	r, _ := http.NewRequestWithContext(context.Background(), "GET", "/account", nil)
	pass := gate.Pass{Principal: sim.Principal{WorkspaceID: 1},
		Rate: sim.RateDecision{Allowed: true, Limit: 20, Remaining: 19, Reset: time.Unix(1767603660, 0)}}

	assert.Error(t, f.check(account, r, pass, http.StatusOK, []byte(`{"object":"account"}`)), "required fields are missing")
	assert.Error(t, f.check(account, r, pass, http.StatusTeapot, []byte(`{"error":{"code":"x","message":"y"}}`)), "an undeclared status")
	assert.NoError(t, f.check(account, r, pass, http.StatusForbidden,
		[]byte(`{"error":{"code":"insufficient_scope","message":"This operation needs the read scope."}}`)))
}
