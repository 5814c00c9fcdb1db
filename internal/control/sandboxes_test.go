package control_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// restAs calls the service's API with a key.
func restAs(t *testing.T, srv *mediamock.Server, key, method, path, body string) (int, map[string]any) {
	t.Helper()
	status, out, _ := testkit.REST(t, srv, key, method, path, body)
	return status, out
}

// ctl calls the control API and holds the answer to control.json.
func ctl(t *testing.T, srv *mediamock.Server, method, path, body string, hdr ...string) (int, string) {
	t.Helper()
	return testkit.Control(t, srv, method, path, body, hdr...)
}

type sandboxJSON struct {
	ID           string            `json:"id"`
	WorkspaceID  uint64            `json:"workspace_id"`
	Keys         map[string]string `json:"keys"`
	APIKey       string            `json:"api_key"`
	ControlToken string            `json:"control_token"`
	BaseURL      string            `json:"base_url"`
	From         string            `json:"from"`
}

func createSandbox(t *testing.T, srv *mediamock.Server, body string, hdr ...string) sandboxJSON {
	t.Helper()
	status, out := ctl(t, srv, "POST", "/sandboxes", body, hdr...)
	require.Equal(t, http.StatusCreated, status, out)
	var sb sandboxJSON
	require.NoError(t, json.Unmarshal([]byte(out), &sb))
	return sb
}

func errCode(t *testing.T, body string) string { t.Helper(); return testkit.ErrorCode(t, body) }

const imageGeneration = `{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse"}`

// A sandbox's life over the control API: created with keys of its own,
// steered by faults that touch it alone, inspected through its own journal
// and coverage, finished without moving the clock, reset, deleted.
func TestSandboxOverTheControlAPI(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	sb := createSandbox(t, srv, `{"name":"CI worker 1"}`)
	assert.Equal(t, "Acme Studio", sb.From)
	assert.Equal(t, srv.BaseURL(), sb.BaseURL)
	assert.Equal(t, sb.Keys["all_scopes"], sb.APIKey)
	require.Len(t, sb.Keys, 5)

	status, acct := restAs(t, srv, sb.APIKey, "GET", "/account", "")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "CI worker 1", acct["workspace_name"])
	status, _ = restAs(t, srv, sb.Keys["read_only"], "POST", "/generations", imageGeneration)
	assert.Equal(t, http.StatusForbidden, status, "the sandbox's keys keep their scopes")

	// A fault of the sandbox fails its generation, not the fixture's.
	status, body := ctl(t, srv, "POST", "/faults/fail-next?sandbox="+sb.ID, `{"count":1}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"scope":"sandbox `+sb.ID+`"`)
	_, mine := restAs(t, srv, sb.APIKey, "POST", "/generations", imageGeneration)
	_, theirs := restAs(t, srv, mediamock.KeyAllScopes, "POST", "/generations", imageGeneration)
	mineID := mine["assets"].([]any)[0].(map[string]any)["id"]
	theirsID := theirs["assets"].([]any)[0].(map[string]any)["id"]

	// The sandbox finishes its work now; the fixture's job waits for the clock.
	clockBefore := srv.Now()
	status, body = ctl(t, srv, "POST", "/sandboxes/"+sb.ID+"/run", `{"limit":"1h"}`)
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, clockBefore, srv.Now())
	_, g := restAs(t, srv, sb.APIKey, "GET", "/generations/"+jsonNumber(mineID), "")
	assert.Equal(t, "failed", g["status"])
	_, g = restAs(t, srv, mediamock.KeyAllScopes, "GET", "/generations/"+jsonNumber(theirsID), "")
	assert.Equal(t, "queued", g["status"])

	// Its journal and coverage hold its requests alone.
	status, body = ctl(t, srv, "GET", "/journal?sandbox="+sb.ID, "")
	require.Equal(t, http.StatusOK, status)
	var j struct {
		Entries []struct {
			WorkspaceID uint64 `json:"workspace_id"`
			SandboxID   string `json:"sandbox_id"`
			Operation   string `json:"operation"`
		} `json:"entries"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &j))
	require.Len(t, j.Entries, 4, "account, the refused and the accepted generation, the read")
	for _, e := range j.Entries {
		assert.Equal(t, sb.WorkspaceID, e.WorkspaceID)
		assert.Equal(t, sb.ID, e.SandboxID)
	}
	status, body = ctl(t, srv, "GET", "/coverage?sandbox="+sb.ID, "")
	require.Equal(t, http.StatusOK, status)
	var cov mediamock.Coverage
	require.NoError(t, json.Unmarshal([]byte(body), &cov))
	assert.Equal(t, 1, cov.Lifecycle["generation_failed_refunded"])
	assert.Zero(t, cov.Lifecycle["generation_completed"])
	assert.Equal(t, 3, cov.Summary.OperationsExercised, "getAccount, createGeneration, getGeneration")

	// The ledger shows the charge and the refund.
	status, body = ctl(t, srv, "GET", "/workspaces/"+jsonNumber(float64(sb.WorkspaceID))+"/ledger", "")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `"type":"refund"`)

	// Reset: back to the start, the same keys.
	status, body = ctl(t, srv, "POST", "/sandboxes/"+sb.ID+"/reset", "")
	require.Equal(t, http.StatusOK, status, body)
	_, acct = restAs(t, srv, sb.APIKey, "GET", "/account", "")
	assert.EqualValues(t, 5000, acct["credits_balance"])
	status, _ = restAs(t, srv, sb.APIKey, "GET", "/generations/"+jsonNumber(mineID), "")
	assert.Equal(t, http.StatusNotFound, status, "what it made is gone")
	_, body = ctl(t, srv, "GET", "/faults?sandbox="+sb.ID, "")
	assert.Contains(t, body, `"fail_next":[]`)

	// Delete: its keys are unknown, its id too.
	status, body = ctl(t, srv, "DELETE", "/sandboxes/"+sb.ID, "")
	require.Equal(t, http.StatusOK, status, body)
	status, _ = restAs(t, srv, sb.APIKey, "GET", "/account", "")
	assert.Equal(t, http.StatusUnauthorized, status)
	for _, call := range [][3]string{{"GET", "/sandboxes/" + sb.ID, ""}, {"DELETE", "/sandboxes/" + sb.ID, ""},
		{"POST", "/sandboxes/" + sb.ID + "/reset", ""}, {"GET", "/faults?sandbox=" + sb.ID, ""}, {"GET", "/journal?sandbox=" + sb.ID, ""}} {
		status, body = ctl(t, srv, call[0], call[1], call[2])
		assert.Equal(t, http.StatusNotFound, status, "%s %s", call[0], call[1])
		assert.Equal(t, "not_found", errCode(t, body))
	}
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// A sandbox's control token reaches its sandbox alone.
func TestSandboxControlToken(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithControlToken("server-secret"))
	server := []string{"Authorization", "Bearer server-secret"}
	status, body := ctl(t, srv, "POST", "/sandboxes", `{}`)
	assert.Equal(t, http.StatusUnauthorized, status, "the server's token is needed to create one")
	assert.Equal(t, "invalid_control_token", errCode(t, body))
	a := createSandbox(t, srv, `{}`, server...)
	b := createSandbox(t, srv, `{"from":"Pixel Garage"}`, server...)
	own := []string{"Authorization", "Bearer " + a.ControlToken}

	status, body = ctl(t, srv, "PUT", "/faults/latency/getAccount", `{"ms":1}`, own...)
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"scope":"sandbox `+a.ID+`"`, "every call is the sandbox's")
	_, body = ctl(t, srv, "GET", "/faults", "", server...)
	assert.Contains(t, body, `"scope":"global"`)
	assert.Contains(t, body, `"latency_ms":{}`, "the global faults are untouched")

	for _, tc := range []struct{ method, path, body, code string }{
		{"POST", "/clock/advance", `{"duration":"1m"}`, "clock_is_shared"},
		{"POST", "/clock/set", `{"time":"2030-01-01T00:00:00Z"}`, "clock_is_shared"},
		{"PUT", "/clock/mode", `{"mode":"manual"}`, "clock_is_shared"},
		{"POST", "/reset", ``, "outside_sandbox"},
		{"GET", "/snapshot", ``, "outside_sandbox"},
		{"GET", "/sandboxes", ``, "outside_sandbox"},
		{"POST", "/sandboxes", `{}`, "outside_sandbox"},
		{"GET", "/sandboxes/" + b.ID, ``, "outside_sandbox"},
		{"DELETE", "/sandboxes/" + b.ID, ``, "outside_sandbox"},
		{"GET", "/faults?sandbox=" + b.ID, ``, "outside_sandbox"},
		{"GET", "/coverage?workspace_id=1", ``, "outside_sandbox"},
		{"GET", "/workspaces/1/ledger", ``, "outside_sandbox"},
		{"POST", "/workspaces", `{"name":"x"}`, "outside_sandbox"},
		{"POST", "/assets/1/fail", `{}`, "not_found"},
	} {
		status, body := ctl(t, srv, tc.method, tc.path, tc.body, own...)
		assert.Contains(t, []int{http.StatusForbidden, http.StatusNotFound}, status, "%s %s: %s", tc.method, tc.path, body)
		assert.Equal(t, tc.code, errCode(t, body), "%s %s", tc.method, tc.path)
	}
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/clock", ``},
		{"GET", "/sandboxes/" + a.ID, ``},
		{"GET", "/journal", ``},
		{"GET", "/coverage", ``},
		{"GET", "/jobs", ``},
		{"GET", "/workspaces/" + jsonNumber(float64(a.WorkspaceID)) + "/ledger", ``},
		{"POST", "/sandboxes/" + a.ID + "/run", `{}`},
	} {
		status, body := ctl(t, srv, tc.method, tc.path, tc.body, own...)
		assert.Equal(t, http.StatusOK, status, "%s %s: %s", tc.method, tc.path, body)
	}
	status, body = ctl(t, srv, "DELETE", "/sandboxes/"+a.ID, "", own...)
	assert.Equal(t, http.StatusOK, status, body)
	status, _ = ctl(t, srv, "GET", "/clock", "", own...)
	assert.Equal(t, http.StatusUnauthorized, status, "a deleted sandbox's token is unknown")
}

// The cap: one sandbox too many is a clear 409.
func TestSandboxCap(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.MaxSandboxes = 2 })
	createSandbox(t, srv, `{"empty_library":true}`)
	sb := createSandbox(t, srv, `{"empty_library":true}`)
	status, body := ctl(t, srv, "POST", "/sandboxes", `{}`)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "sandbox_limit_reached", errCode(t, body))
	assert.Contains(t, body, "--max-sandboxes")
	ctl(t, srv, "DELETE", "/sandboxes/"+sb.ID, "")
	createSandbox(t, srv, `{}`)

	status, body = ctl(t, srv, "POST", "/sandboxes", `{"from":"Nobody","keys":[{"name":"k","scopes":["admin"]}],"surprise":1}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "validation_failed", errCode(t, body))
}

// A control token that was sent must be valid: a deleted sandbox's token,
// or one made up, is refused with 401 on every control door (the HTTP API
// the dashboard calls too, and the event stream), on a server with or
// without a control token of its own, and no fault is created. A request
// with no credential keeps the open local default.
func TestStaleControlTokenIsRefused(t *testing.T) {
	for _, serverToken := range []string{"", "server-secret"} {
		t.Run("control token "+map[bool]string{true: "set", false: "unset"}[serverToken != ""], func(t *testing.T) {
			srv := mediamock.RunT(t, mediamock.WithControlToken(serverToken))
			var server []string
			if serverToken != "" {
				server = []string{"Authorization", "Bearer " + serverToken}
			}
			sb := createSandbox(t, srv, `{}`, server...)
			status, body := ctl(t, srv, "DELETE", "/sandboxes/"+sb.ID, "", server...)
			require.Equal(t, http.StatusOK, status, body)

			for _, token := range []string{sb.ControlToken, "sbc_1_made_up", "not-a-control-token"} {
				stale := []string{"Authorization", "Bearer " + token}
				for _, tc := range []struct{ method, path, body string }{
					{"POST", "/faults/fail-next", `{"count":1}`},
					{"POST", "/faults/rules", `{"kind":"status","status":503}`},
					{"GET", "/faults", ""},
				} {
					status, body := ctl(t, srv, tc.method, tc.path, tc.body, stale...)
					assert.Equal(t, http.StatusUnauthorized, status, "%s %s with %s: %s", tc.method, tc.path, token, body)
					assert.Equal(t, "invalid_control_token", errCode(t, body))
				}
				// The event stream takes its token in the query too.
				resp, body := testkit.Send(t, srv, "GET", "/_mock/events?token="+token, "", nil, "")
				assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
			}
			status, body = ctl(t, srv, "GET", "/faults", "", server...)
			require.Equal(t, http.StatusOK, status, body)
			var f mediamock.Faults
			require.NoError(t, json.Unmarshal([]byte(body), &f))
			assert.Empty(t, f.Rules, "no fault was created")
			assert.Empty(t, f.FailNext)
			if serverToken == "" {
				status, _ := ctl(t, srv, "GET", "/faults", "")
				assert.Equal(t, http.StatusOK, status, "no credential: the open local default")
			}
		})
	}
}

// A reset sandbox is the sandbox it was: its starting library, brand kits,
// projects, characters and social accounts read back byte for byte, ids
// included, as after a fresh RunT; work done after the reset numbers on.
func TestResetSandboxReadsBackAsItStarted(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Clock = mediamock.ClockManual })
	sb := createSandbox(t, srv, `{}`)
	reads := []string{"/assets?limit=50", "/brand_kits", "/projects", "/characters", "/social/accounts", "/account"}
	read := func() map[string]string {
		out := map[string]string{}
		for _, path := range reads {
			resp, body := testkit.Send(t, srv, "GET", "/api/v1"+path, "", map[string]string{"Authorization": "Bearer " + sb.APIKey}, "")
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
			out[path] = body
		}
		return out
	}
	before := read()
	require.Contains(t, before["/assets?limit=50"], `"id":`, "the sandbox starts with a library")

	// Change it: a generation, an hour of the clock.
	status, got := restAs(t, srv, sb.APIKey, "POST", "/generations", imageGeneration)
	require.Equal(t, http.StatusCreated, status, "%v", got)
	made := got["assets"].([]any)[0].(map[string]any)["id"].(float64)
	status, body := ctl(t, srv, "POST", "/clock/advance", `{"duration":"1h"}`)
	require.Equal(t, http.StatusOK, status, body)
	require.NotEqual(t, before["/assets?limit=50"], read()["/assets?limit=50"])

	status, body = ctl(t, srv, "POST", "/sandboxes/"+sb.ID+"/reset", `{}`)
	require.Equal(t, http.StatusOK, status, body)
	after := read()
	for _, path := range reads {
		assert.Equal(t, before[path], after[path], "%s reads back as it started", path)
	}

	status, got = restAs(t, srv, sb.APIKey, "POST", "/generations", imageGeneration)
	require.Equal(t, http.StatusCreated, status, "%v", got)
	assert.Greater(t, got["assets"].([]any)[0].(map[string]any)["id"].(float64), made, "new work numbers on")
}
