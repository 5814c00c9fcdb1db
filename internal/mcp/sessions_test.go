package mcp_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// TestSessionsAreCapped: a workspace opens at most 256 sessions; the next
// initialize is a JSON-RPC error that says why and what to do, ending a
// session frees its place, and another workspace is not held back. The
// heap stays bounded by the cap however many initialize.
func TestSessionsAreCapped(t *testing.T) {
	const perWorkspace = 256
	srv := mediamock.RunT(t, mediamock.WithLogger(nil))
	h := http.Header{"Authorization": {"Bearer " + mediamock.KeyBusiness}, "Content-Type": {"application/json"},
		"Accept": {"application/json, text/event-stream"}}
	before := testkit.HeapInUse()
	var first string
	for i := range perWorkspace {
		resp, _ := post(t, srv, h, initialize)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		id := resp.Header.Get("Mcp-Session-Id")
		require.NotEmpty(t, id, "session %d", i+1)
		if first == "" {
			first = id
		}
	}
	refused := func() {
		t.Helper()
		for range 500 {
			resp, body := post(t, srv, h, initialize, true)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Empty(t, resp.Header.Get("Mcp-Session-Id"))
			var msg struct {
				ID    int
				Error struct {
					Code    int
					Message string
					Data    struct {
						Error struct{ Code, Message string }
					}
				}
			}
			require.NoError(t, json.Unmarshal(body, &msg), "%s", body)
			assert.Equal(t, 1, msg.ID)
			assert.Equal(t, -32001, msg.Error.Code)
			assert.Equal(t, "too_many_sessions", msg.Error.Data.Error.Code)
			assert.Contains(t, msg.Error.Message, "DELETE /mcp")
		}
	}
	refused()
	held := int64(testkit.HeapInUse()) - int64(before)
	t.Logf("heap held by %d sessions and 500 refusals: %d KB", perWorkspace, held>>10)
	assert.Less(t, held, int64(16<<20))

	// Ending a session frees its place, once.
	req, err := http.NewRequest(http.MethodDelete, srv.MCPURL(), nil)
	require.NoError(t, err)
	req.Header = h.Clone()
	req.Header.Set("Mcp-Session-Id", first)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Less(t, resp.StatusCode, 300)
	resp, _ = post(t, srv, h, initialize)
	assert.NotEmpty(t, resp.Header.Get("Mcp-Session-Id"))
	refused()

	// Another workspace has places of its own.
	other := h.Clone()
	other.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	resp, _ = post(t, srv, other, initialize)
	assert.NotEmpty(t, resp.Header.Get("Mcp-Session-Id"))
}

// TestIdleSessionsEnd: a session without a request for 10 minutes of wall
// time ends (its next request is 404, as for any session the server does
// not know); one in use does not, tool calls answered by the front
// included.
func TestIdleSessionsEnd(t *testing.T) {
	var mu sync.Mutex
	wall := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return wall }
	pass := func(d time.Duration) { mu.Lock(); wall = wall.Add(d); mu.Unlock() }
	srv := mediamock.RunT(t, mediamock.WithLogger(nil), func(o *mediamock.Options) { o.WallClock = now; o.Clock = mediamock.ClockManual })
	idle := session(t, srv, "2025-11-25")
	busy := session(t, srv, "2025-11-25")
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_account","arguments":{}}}`
	for range 3 {
		pass(4 * time.Minute)
		resp, body := post(t, srv, busy, call, true)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	}
	session(t, srv, "2025-11-25") // an initialize sweeps the idle sessions
	resp, _ := post(t, srv, idle, call)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "12 minutes idle: ended")
	resp, _ = post(t, srv, busy, call)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "4 minutes since its last call: alive")
}

// TestServerCapLocksNoWorkspaceOut: 20 sandboxes each opening as many
// sessions as a workspace may (the caps made 32 and 2 here, as 4096 and
// 256 are by default: 16 workspaces fill the server) never stop the next
// workspace's initialize. Past the server's cap, the least recently used
// session of a workspace holding the most ends instead; a workspace past
// its own cap is still refused. No session is idle long enough to end on
// its own: the wall clock moves a second per initialize.
func TestServerCapLocksNoWorkspaceOut(t *testing.T) {
	const capServer, capWorkspace, sandboxes = 32, 2, 21
	var mu sync.Mutex
	wall := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); wall = wall.Add(time.Second); return wall }
	srv := mediamock.RunT(t, mediamock.WithLogger(nil), func(o *mediamock.Options) {
		o.WallClock, o.Clock = now, mediamock.ClockManual
		o.MaxMCPSessions, o.MaxMCPWorkspaceSessions = capServer, capWorkspace
	})
	type opened struct {
		sandbox int
		h       http.Header
	}
	var sessions []opened
	for i := range sandboxes {
		sb := srv.Sandbox(t)
		h := http.Header{"Authorization": {"Bearer " + sb.APIKey}, "Content-Type": {"application/json"},
			"Accept": {"application/json, text/event-stream"}}
		for range capWorkspace {
			resp, body := post(t, srv, h, initialize, true)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			id := resp.Header.Get("Mcp-Session-Id")
			require.NotEmpty(t, id, "sandbox %d: initialize refused: %s", i+1, body)
			s := h.Clone()
			s.Set("Mcp-Session-Id", id)
			s.Set("Mcp-Protocol-Version", "2025-11-25")
			sessions = append(sessions, opened{i, s})
		}
		if i == sandboxes-1 { // its own cap still holds
			_, body := post(t, srv, h, initialize, true)
			assert.Contains(t, string(body), `"scope":"workspace"`)
			assert.Contains(t, string(body), `"too_many_sessions"`)
		}
	}
	// The places are shared out: every sandbox keeps its newest session
	// (a workspace gives up its least recently used one), those holding
	// the most gave theirs up first, and the server holds its cap.
	ping := `{"jsonrpc":"2.0","id":9,"method":"ping"}`
	open, kept := 0, map[int]int{}
	for k, s := range sessions {
		resp, _ := post(t, srv, s.h, ping)
		if resp.StatusCode == http.StatusOK {
			open++
			kept[s.sandbox]++
			continue
		}
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		assert.NotEqual(t, capWorkspace-1, k%capWorkspace, "sandbox %d lost its newest session", s.sandbox+1)
	}
	assert.Equal(t, capServer, open)
	for i := range sandboxes {
		assert.GreaterOrEqual(t, kept[i], 1, "sandbox %d", i+1)
	}
}

// openSessionsGauge reads mediamock_mcp_sessions_open from the metrics.
func openSessionsGauge(t *testing.T, srv *mediamock.Server) int {
	t.Helper()
	status, body := testkit.Control(t, srv, "GET", "/metrics", "")
	require.Equal(t, http.StatusOK, status)
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, "mediamock_mcp_sessions_open "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			require.NoError(t, err, line)
			return n
		}
	}
	t.Fatalf("no mediamock_mcp_sessions_open in the metrics")
	return 0
}

// initializeAtOnce sends n initializes at once with key and counts the
// sessions they opened.
func initializeAtOnce(t *testing.T, srv *mediamock.Server, key string, n int) int {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	var wg sync.WaitGroup
	var opened atomic.Int64
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			resp, _ := post(t, srv, h, initialize)
			if resp.Header.Get("Mcp-Session-Id") != "" {
				opened.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	return int(opened.Load())
}

// TestSessionCapsHoldUnderParallelInitializes: the caps are exact under
// any concurrency (a place is reserved before the session exists): 300
// initializes at once from one workspace open exactly its 256 sessions;
// with the server full (4 workspaces of 16, a server of 64), 60 at once
// from a new workspace take places from the workspaces holding the most
// until it holds as many as any of them (13: 13, 13, 13 and 12 are left),
// and the server never holds more than its cap.
func TestSessionCapsHoldUnderParallelInitializes(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithLogger(nil))
	assert.Equal(t, 256, initializeAtOnce(t, srv, mediamock.KeyBusiness, 300), "one workspace's cap")
	assert.Equal(t, 256, openSessionsGauge(t, srv))

	const capServer, capWorkspace = 64, 16
	full := mediamock.RunT(t, mediamock.WithLogger(nil), func(o *mediamock.Options) {
		o.MaxMCPSessions, o.MaxMCPWorkspaceSessions = capServer, capWorkspace
	})
	for range capServer / capWorkspace {
		require.Equal(t, capWorkspace, initializeAtOnce(t, full, full.Sandbox(t).APIKey, capWorkspace))
	}
	require.Equal(t, capServer, openSessionsGauge(t, full))
	assert.Equal(t, 13, initializeAtOnce(t, full, full.Sandbox(t).APIKey, 60), "a new workspace's share of a full server")
	assert.Equal(t, capServer, openSessionsGauge(t, full), "the server's cap")
}
