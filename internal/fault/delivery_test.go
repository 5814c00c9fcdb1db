package fault_test

import (
	"io"
	"net/http"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/fault"
	"github.com/mediamock/mediamock/internal/testkit"
)

// freshClient dials a new connection for every request: a fault that
// breaks a connection must reach the caller, not a transparent retry of
// net/http on a reused one.
func freshClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

func get(t *testing.T, c *http.Client, url string, header ...string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return c.Do(req)
}

// Each fault kind below a well-formed answer, as Go's net/http client
// meets it over a real TCP connection, asked for by the Mock-Fault header.
func TestTransportFaultsReachARealClient(t *testing.T) {
	srv := mediamock.RunT(t)
	c := freshClient()
	account := srv.BaseURL() + "/account"

	_, err := get(t, c, account, "Mock-Fault", "reset")
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ECONNRESET, "reset: the client reads a connection reset by peer")

	_, err = get(t, c, account, "Mock-Fault", "empty_reply")
	require.Error(t, err)
	assert.ErrorIs(t, err, io.EOF, "empty_reply: the server closed without a byte")

	resp, err := get(t, c, account, "Mock-Fault", "truncate; after_bytes=10")
	require.NoError(t, err, "truncate: the head arrives whole")
	assert.Equal(t, 200, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "truncate: the body stops short of its Content-Length")
	assert.Len(t, body, 10)

	resp, err = get(t, c, account, "Mock-Fault", "reset; after_bytes=5")
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.ErrorIs(t, err, syscall.ECONNRESET, "reset mid-body")

	_, err = get(t, c, account, "Mock-Fault", "garbage_then_close; bytes=64")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "malformed HTTP", "garbage: not an HTTP answer")

	resp, err = get(t, c, account, "Mock-Fault", "slow_body; bytes_per_second=100000")
	require.NoError(t, err)
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err, "slow_body: every byte arrives, late")
	assert.Equal(t, "account", testkit.JSON(t, body)["object"])

	resp, err = get(t, c, account, "Mock-Fault", "latency; distribution=fixed; ms=2")
	require.NoError(t, err)
	resp.Body.Close()

	kinds := map[string]string{}
	for _, e := range srv.Journal(mediamock.JournalFilter{Operation: "getAccount"}) {
		kinds[e.Fault] = e.FaultRule
		if e.Fault == "latency" {
			assert.EqualValues(t, 2, e.InjectedLatencyMS)
		}
	}
	for _, k := range []string{"reset", "empty_reply", "truncate", "garbage_then_close", "slow_body", "latency"} {
		assert.Equal(t, "header", kinds[k], "the journal records %s and that the header asked for it", k)
	}
	cov := srv.Coverage()
	met := map[string]int{}
	for _, f := range cov.FailurePaths {
		met[f.Kind] = f.Met
	}
	assert.Equal(t, 2, met["reset"])
	assert.Equal(t, 1, met["truncate"])
	assert.Len(t, cov.FailurePaths, len(fault.RequestKinds()), "every kind that strikes requests is listed, met or not")
	assert.Equal(t, 0, met["mcp_session_expire"])

	// The server's answers go on.
	resp, err = get(t, c, account)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
}

// The in-memory transport (a server without a listener) fails the way a
// TCP connection does.
func TestTransportFaultsInMemory(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.NoListener = true })
	c := srv.Client()
	account := srv.BaseURL() + "/account"
	_, err := get(t, c, account, "Mock-Fault", "reset")
	assert.ErrorIs(t, err, syscall.ECONNRESET)
	_, err = get(t, c, account, "Mock-Fault", "empty_reply")
	assert.ErrorIs(t, err, io.EOF)
	resp, err := get(t, c, account, "Mock-Fault", "truncate; after_fraction=0.5")
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, err = get(t, c, account, "Mock-Fault", "garbage_then_close")
	assert.ErrorContains(t, err, "malformed HTTP")
}

// The connection-level faults reach a client over https too.
func TestTLSTransportFaults(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithTLS())
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	c := &http.Client{Transport: tr}
	account := srv.BaseURL() + "/account"

	_, err := get(t, c, account, "Mock-Fault", "reset")
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ECONNRESET, "reset: the client reads a connection reset by peer")

	_, err = get(t, c, account, "Mock-Fault", "empty_reply")
	require.Error(t, err, "empty_reply")

	resp, err := get(t, c, account, "Mock-Fault", "truncate; after_bytes=10")
	require.NoError(t, err, "truncate: the head arrives whole")
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Len(t, body, 10)

	resp, err = get(t, c, account)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode, "and an ordinary request after them")
}
