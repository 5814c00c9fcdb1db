package testkit

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/spec"
)

// ControlContract is control.json, parsed once.
var ControlContract = sync.OnceValues(func() (*contract.Contract, error) {
	return contract.Parse("control.json", spec.Control)
})

// Control calls the control API (path relative to /_mock) and checks the
// exchange against control.json; a request with a body, or of another
// method than GET, is sent as JSON unless hdr says otherwise. hdr are
// header names and values, in pairs. It returns the status and the body.
func Control(t testing.TB, srv Server, method, path, body string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL()+"/_mock"+path, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" || method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)

	c, err := ControlContract()
	require.NoError(t, err)
	vr, err := http.NewRequest(method, "/_mock"+path, nil)
	require.NoError(t, err)
	assert.NoError(t, c.CheckExchange(vr, resp.StatusCode, resp.Header, b), "%s %s -> %d breaks control.json: %s", method, path, resp.StatusCode, b)
	return resp.StatusCode, string(b)
}

// Tokens lists the tokens of workspace ws, from the control API.
func Tokens(t testing.TB, srv Server, ws uint64) []any {
	t.Helper()
	status, body := Control(t, srv, "GET", "/workspaces/"+strconv.FormatUint(ws, 10), "")
	require.Equal(t, http.StatusOK, status, body)
	return JSON(t, body)["tokens"].([]any)
}
