package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// TestRateLimitSharedWithREST: REST requests and MCP tool calls of one
// workspace draw on one window (the free plan's 20 a minute); MCP's
// protocol messages draw nothing (resource reads do: TestResourceReadsCount). The 21st counted request is refused
// whichever front it comes through.
func TestRateLimitSharedWithREST(t *testing.T) {
	for _, version := range []string{latest, sessioned} {
		t.Run("protocol "+version, func(t *testing.T) {
			srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
			ctx := context.Background()
			c := connect(t, srv, mediamock.KeyFreePlan, version) // the handshake does not count
			protocol := func() {
				t.Helper()
				_, err := c.ListTools(ctx, nil)
				require.NoError(t, err)
				_, err = c.ListResources(ctx, nil)
				require.NoError(t, err)
				if version == sessioned { // ping is gone from the sessionless revision
					require.NoError(t, c.Ping(ctx, nil))
				}
			}
			protocol()
			status, _, h := testkit.REST(t, srv, mediamock.KeyFreePlan, "GET", "/account", nil)
			require.Equal(t, http.StatusOK, status)
			assert.Equal(t, "19", h.Get("X-RateLimit-Remaining"), "only this request counted so far")

			for i := 2; i <= 20; i++ { // the 2nd to the 20th counted requests, through both fronts
				if i%2 == 0 {
					c.call("list_assets", map[string]any{"limit": 1}).ok()
				} else {
					status, _, h := testkit.REST(t, srv, mediamock.KeyFreePlan, "GET", "/assets?limit=1", nil)
					require.Equal(t, http.StatusOK, status, "request %d", i)
					assert.Equal(t, strconv.Itoa(20-i), h.Get("X-RateLimit-Remaining"))
				}
				protocol()
			}

			// The 21st, through MCP: a tool error with the seconds to wait.
			over := c.call("get_account", nil)
			require.Equal(t, "rate_limited", over.Code(), "%s", over.Raw)
			details := over.JSON["error"].(map[string]any)["details"].(map[string]any)
			assert.EqualValues(t, 20, details["limit"])
			retry := details["retry_after_seconds"].(float64)
			assert.True(t, retry >= 1 && retry <= 60, "retry after %v s", retry)
			assert.Contains(t, over.text(), fmt.Sprintf("retry in %d seconds", int(retry)))
			// And through REST.
			status, body, h := testkit.REST(t, srv, mediamock.KeyFreePlan, "GET", "/account", nil)
			assert.Equal(t, http.StatusTooManyRequests, status)
			assert.Equal(t, "rate_limited", body["error"].(map[string]any)["code"])
			assert.NotEmpty(t, h.Get("Retry-After"))
			protocol() // protocol messages still answer over the limit

			require.NoError(t, srv.Advance(time.Minute))
			c.call("get_account", nil).ok()
		})
	}
}

// TestConcurrentFrontsShareOneWindow: 64 goroutines call one workspace
// through REST and MCP (both protocol revisions) at once; exactly the limit
// gets through in one window.
func TestConcurrentFrontsShareOneWindow(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	sessions := []*client{
		connect(t, srv, mediamock.KeyFreePlan, latest), connect(t, srv, mediamock.KeyFreePlan, sessioned),
		connect(t, srv, mediamock.KeyFreePlan, latest), connect(t, srv, mediamock.KeyFreePlan, sessioned),
	}
	const goroutines, each, limit = 64, 3, 20
	var allowed, refused, broken atomic.Int32
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				ok, limited, err := callOnce(srv, sessions[g%len(sessions)], (g+i)%2 == 0)
				switch {
				case err != nil:
					broken.Add(1)
					t.Error(err)
				case ok:
					allowed.Add(1)
				case limited:
					refused.Add(1)
				default:
					broken.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, limit, allowed.Load())
	assert.EqualValues(t, goroutines*each-limit, refused.Load())
	assert.Zero(t, broken.Load())
}

// callOnce reads the account through REST or MCP; it reports whether the
// call got through or was refused for the rate limit.
func callOnce(srv *mediamock.Server, c *client, viaREST bool) (ok, limited bool, err error) {
	if viaREST {
		req, err := http.NewRequest("GET", srv.BaseURL()+"/account", nil)
		if err != nil {
			return false, false, err
		}
		req.Header.Set("Authorization", "Bearer "+mediamock.KeyFreePlan)
		resp, err := srv.Client().Do(req)
		if err != nil {
			return false, false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.StatusCode == http.StatusTooManyRequests, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Bound)
	defer cancel()
	res, err := c.CallTool(ctx, &sdk.CallToolParams{Name: "get_account", Arguments: map[string]any{}})
	if err != nil {
		return false, false, err
	}
	var body struct {
		Error struct{ Code string }
	}
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, &body); err != nil {
		return false, false, err
	}
	return !res.IsError, body.Error.Code == "rate_limited", nil
}

// TestResourceReadsCount: a resources/read counts once against the rate
// window, the catalog's as an asset's; over the
// limit it is a JSON-RPC error carrying the spec's rate_limited object.
func TestResourceReadsCount(t *testing.T) {
	for _, version := range []string{latest, sessioned} {
		t.Run("protocol "+version, func(t *testing.T) {
			srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
			ctx := context.Background()
			c := connect(t, srv, mediamock.KeyFreePlan, version)
			page := c.call("list_assets", map[string]any{"limit": 1, "status": "completed"}).ok() // 1
			asset := fmt.Sprintf("mediamock://assets/%d", page.id("data.0.id"))

			_, err := c.ReadResource(ctx, &sdk.ReadResourceParams{URI: "mediamock://models"}) // 2
			require.NoError(t, err)
			file, err := c.ReadResource(ctx, &sdk.ReadResourceParams{URI: asset}) // 3
			require.NoError(t, err)
			require.Len(t, file.Contents, 1)
			assert.NotEmpty(t, file.Contents[0].Blob)
			status, _, h := testkit.REST(t, srv, mediamock.KeyFreePlan, "GET", "/account", nil) // 4
			require.Equal(t, http.StatusOK, status)
			assert.Equal(t, "16", h.Get("X-RateLimit-Remaining"))

			for range 16 {
				_, err := c.ReadResource(ctx, &sdk.ReadResourceParams{URI: asset})
				require.NoError(t, err)
			}
			for _, uri := range []string{asset, "mediamock://models"} {
				_, err = c.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
				var rpcErr *jsonrpc.Error
				require.ErrorAs(t, err, &rpcErr, "%s over the limit", uri)
				assert.EqualValues(t, -32001, rpcErr.Code)
				assert.Contains(t, string(rpcErr.Data), `"code":"rate_limited"`)
			}
			require.NoError(t, srv.Advance(time.Minute))
			_, err = c.ReadResource(ctx, &sdk.ReadResourceParams{URI: asset})
			require.NoError(t, err)
		})
	}
}

// TestBatchCarriesItsLastWindow: the answer to a batch of three tool calls
// (2025-03-26) carries the window after the third.
func TestBatchCarriesItsLastWindow(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	h := session(t, srv, "2025-03-26")
	h.Set("Authorization", "Bearer "+mediamock.KeyBusiness)
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_account","arguments":{}}}`, id)
	}
	status, _, before := testkit.REST(t, srv, mediamock.KeyBusiness, "GET", "/account", nil)
	require.Equal(t, http.StatusOK, status)
	left, err := strconv.Atoi(before.Get("X-RateLimit-Remaining"))
	require.NoError(t, err)
	resp, body := post(t, srv, h, "["+call(2)+","+call(3)+","+call(4)+"]", true)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Equal(t, 3, strings.Count(string(body), `"workspace_name"`), "%s", body)
	assert.Equal(t, strconv.Itoa(left-3), resp.Header.Get("X-RateLimit-Remaining"))
}
