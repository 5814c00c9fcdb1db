package mediamock_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

// A rule: a forced status with a probability, targeted at one operation;
// a creation that meets a delivery fault was made and charged all the same.
func TestFaultRulesTargetAndStrike(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	status, body := testkit.Control(t, srv, "POST", "/faults/rules", `{"kind":"status","status":503,"operation":"listModels","first":2}`)
	require.Equal(t, 201, status, body)
	rule := testkit.JSON(t, body)
	assert.Equal(t, "flt_1", rule["id"])

	for i := range 3 {
		st, out, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", "/models", "")
		if i < 2 {
			assert.Equal(t, 503, st)
			assert.Equal(t, "service_unavailable", out["error"].(map[string]any)["code"])
		} else {
			assert.Equal(t, 200, st, "the rule is spent after first=2")
		}
	}
	st, _, _ := testkit.REST(t, srv, mediamock.KeyAllScopes, "GET", "/account", "")
	assert.Equal(t, 200, st, "another operation is not targeted")
	f, err := srv.Faults()
	require.NoError(t, err)
	assert.Empty(t, f.Rules, "a spent rule is removed")

	// A reset after the creation ran: the client saw nothing, the job exists.
	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "reset", Operation: "createGeneration", First: 1})
	require.NoError(t, err)
	acme := testkit.API(t, srv, "GET", "/account", "")
	before := acme["credits_balance"]
	require.NoError(t, err)
	req, _ := http.NewRequest("POST", srv.BaseURL()+"/generations", strings.NewReader(`{"modality":"image","model_id":"imagen-4","prompt":"lost answer"}`))
	req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
	req.Header.Set("Content-Type", "application/json")
	_, err = freshClient().Do(req)
	assert.ErrorIs(t, err, syscall.ECONNRESET)
	after := testkit.API(t, srv, "GET", "/account", "")["credits_balance"]
	assert.NotEqual(t, before, after, "the creation was charged though its answer was lost")
	e := srv.Journal(mediamock.JournalFilter{Operation: "createGeneration", Limit: 1})
	require.Len(t, e, 1)
	assert.Equal(t, 201, e[0].Status)
	assert.Equal(t, "reset", e[0].Fault)
}

// A truncated MP4 download resumed with Range is the whole file, and
// FFmpeg's ffprobe reads it; the coverage sees the client resume.
func TestTruncatedVideoResumesWithRange(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	created := testkit.API(t, srv, "POST", "/generations", `{"modality":"video","model_id":"veo-3-fast","prompt":"a resumed download"}`)
	require.Contains(t, created, "assets", created)
	id := created["assets"].([]any)[0].(map[string]any)["id"]
	_, err := srv.RunUntilIdle(time.Hour)
	require.NoError(t, err)
	url := assetURL(t, srv, id)

	c := freshClient()
	whole, err := get(t, c, url)
	require.NoError(t, err)
	want, err := io.ReadAll(whole.Body)
	whole.Body.Close()
	require.NoError(t, err)

	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "file_truncate", AfterFraction: new(0.3)})
	require.NoError(t, err)
	got := downloadResuming(t, c, url)
	assert.Equal(t, sha256.Sum256(want), sha256.Sum256(got), "resumed with Range, the file is whole")

	if probe, err := exec.LookPath("ffprobe"); err == nil {
		path := filepath.Join(t.TempDir(), "resumed.mp4")
		require.NoError(t, os.WriteFile(path, got, 0o600))
		out, err := exec.Command(probe, "-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", path).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), "video")
	}
	next := map[string]int{}
	for _, f := range srv.Coverage().FailurePaths {
		if f.Kind == "file_truncate" {
			assert.Equal(t, 1, f.Met, "the first whole download only")
			next = f.Next
		}
	}
	assert.Equal(t, 1, next["resumed_with_range"])
}

// assetURL reads an asset's file address, as a client does.
func assetURL(t *testing.T, srv *mediamock.Server, id any) string {
	t.Helper()
	out := testkit.API(t, srv, "GET", fmt.Sprintf("/assets/%v", id), "")
	assets, _ := out["assets"].([]any)
	require.Len(t, assets, 1, "%v", out)
	url, _ := assets[0].(map[string]any)["url"].(string)
	require.NotEmpty(t, url, "%v", out)
	return url
}

// downloadResuming is a client's download loop: on a broken body it asks
// for the rest with Range.
func downloadResuming(t *testing.T, c *http.Client, url string) []byte {
	t.Helper()
	var got []byte
	for attempt := 0; attempt < 5; attempt++ {
		var hdr []string
		if len(got) > 0 {
			hdr = []string{"Range", fmt.Sprintf("bytes=%d-", len(got))}
		}
		resp, err := get(t, c, url, hdr...)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got = append(got, b...)
		if err == nil {
			require.Greater(t, attempt, 0, "the first download broke")
			return got
		}
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	}
	t.Fatal("the download never finished")
	return nil
}

// File addresses expire on the simulated clock; reading the asset again
// gives a fresh one; a moved expiry is refused.
func TestFileURLsExpire(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	created := testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"an expiring link"}`)
	id := created["assets"].([]any)[0].(map[string]any)["id"]
	_, err := srv.RunUntilIdle(time.Hour)
	require.NoError(t, err)
	_, err = srv.AddFault(mediamock.FaultSpec{Kind: "file_expiry", TTLSeconds: new(int64(3600))})
	require.NoError(t, err)
	url := assetURL(t, srv, id)
	assert.Contains(t, url, "?expires=")
	assert.Contains(t, url, "&signature=")

	c := freshClient()
	resp, err := get(t, c, url)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode, "fresh")

	require.NoError(t, srv.Advance(3601*time.Second))
	resp, err = get(t, c, url)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 403, resp.StatusCode)
	assert.Equal(t, "file_url_expired", testkit.ErrorCode(t, string(body)))

	fresh := assetURL(t, srv, id)
	assert.NotEqual(t, url, fresh)
	resp, err = get(t, c, fresh)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode, "read again, the asset hands out a fresh address")

	moved := strings.Replace(fresh, "?expires=", "?expires=9", 1)
	resp, err = get(t, c, moved)
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "invalid_signature", testkit.ErrorCode(t, string(body)))

	var next map[string]int
	for _, f := range srv.Coverage().FailurePaths {
		if f.Kind == "file_expiry" {
			next = f.Next
		}
	}
	assert.Equal(t, 1, next["reread"], "after the expiry the client read the asset again")

	require.NoError(t, srv.ClearFaults())
	plain := assetURL(t, srv, id)
	assert.NotContains(t, plain, "expires", "without the fault, addresses are plain again")
}

// Same seed, same requests: the same faults, request for request.
func TestFaultsFollowTheSeed(t *testing.T) {
	run := func() []byte {
		srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual), func(o *mediamock.Options) {
			o.NoListener, o.JournalSize = true, 2000
		})
		for _, spec := range []mediamock.FaultSpec{
			{Kind: "reset", Probability: new(0.1)},
			{Kind: "truncate", Probability: new(0.2), Operation: "listModels"},
			{Kind: "latency", Distribution: "lognormal", MedianMS: new(int64(0)), Sigma: new(1.0), Probability: new(0.3)},
			{Kind: "status", Status: 503, Probability: new(0.05)},
		} {
			_, err := srv.AddFault(spec)
			require.NoError(t, err)
		}
		c := srv.Client()
		for i := range 1000 {
			path := []string{"/account", "/models"}[i%2]
			if resp, err := get(t, c, srv.BaseURL()+path); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		entries := srv.Journal(mediamock.JournalFilter{})
		require.Len(t, entries, 1000)
		var b bytes.Buffer
		for _, e := range entries {
			// Wall-clock measurements are the only fields that differ.
			e.Time, e.DurationMS = time.Time{}, 0
			line, err := json.Marshal(e)
			require.NoError(t, err)
			b.Write(line)
			b.WriteByte('\n')
		}
		return b.Bytes()
	}
	first, second := run(), run()
	assert.Equal(t, string(first), string(second), "byte-identical journals")
	for _, kind := range []string{`"fault":"reset"`, `"fault":"truncate"`, `"fault":"status"`} {
		assert.Contains(t, string(first), kind)
	}
}

// A sandbox's fault is its own: another sandbox, and the server's
// workspaces, never meet it.
func TestFaultsStayInTheirSandbox(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithClock(mediamock.ClockManual))
	a, b := srv.Sandbox(t), srv.Sandbox(t)
	_, err := a.AddFault(mediamock.FaultSpec{Kind: "reset"})
	require.NoError(t, err)
	c := freshClient()
	for range 20 {
		for _, key := range []string{b.APIKey, mediamock.KeyAllScopes} {
			req, _ := http.NewRequest("GET", srv.BaseURL()+"/account", nil)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := c.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
		}
	}
	req, _ := http.NewRequest("GET", srv.BaseURL()+"/account", nil)
	req.Header.Set("Authorization", "Bearer "+a.APIKey)
	_, err = c.Do(req)
	assert.ErrorIs(t, err, syscall.ECONNRESET, "the sandbox's own requests meet it")
	for _, e := range srv.Journal(mediamock.JournalFilter{}) {
		if e.Fault != "" {
			assert.Equal(t, a.ID, e.SandboxID, "a fault only ever struck sandbox %s", a.ID)
		}
	}
	fb, err := b.Faults()
	require.NoError(t, err)
	assert.Empty(t, fb.Rules)
	assert.False(t, fb.GlobalFaults)
}

// Bad fault specs are refused whole, naming the field; nothing is kept.
func TestBadFaultSpecs(t *testing.T) {
	srv := mediamock.RunT(t)
	for _, tc := range []struct{ body, field string }{
		{`{"kind":"meltdown"}`, "kind"},
		{`{}`, "kind"},
		{`{"kind":"truncate","after_bytes":-1}`, "after_bytes"},
		{`{"kind":"slow_body"}`, "bytes_per_second"},
		{`{"kind":"slow_body","bytes_per_second":-5}`, "bytes_per_second"},
		{`{"kind":"reset","probability":1.5}`, "probability"},
		{`{"kind":"latency"}`, "distribution"},
		{`{"kind":"latency","distribution":"uniform","min_ms":10}`, "max_ms"},
		{`{"kind":"latency","distribution":"lognormal","median_ms":100}`, "sigma"},
		{`{"kind":"latency","distribution":"fixed","ms":5,"sigma":1}`, "sigma"},
		{`{"kind":"file_expiry"}`, "ttl_seconds"},
		{`{"kind":"file_expiry","ttl_seconds":60,"class":"api"}`, "class"},
		{`{"kind":"mcp_unavailable","operation":"getAccount"}`, "operation"},
		{`{"kind":"status","status":418}`, "status"},
		{`{"kind":"reset","bytes_per_second":10}`, "bytes_per_second"},
		{`{"kind":"truncate","after_bytes":1,"after_fraction":0.5}`, "after_fraction"},
	} {
		status, body := testkit.Control(t, srv, "POST", "/faults/rules", tc.body)
		assert.Equal(t, 400, status, tc.body)
		assert.Contains(t, body, `"field":"`+tc.field+`"`, "%s names %s: %s", tc.body, tc.field, body)
	}
	f, err := srv.Faults()
	require.NoError(t, err)
	assert.Empty(t, f.Rules, "nothing was half-applied")

	for _, tc := range []struct{ header, reason string }{
		{"meltdown", "unknown fault kind"},
		{"truncate; after_bytes=-1", "after_bytes"},
		{"truncate; after_bytes", "name=value"},
		{"latency; distribution=lognormal; median_ms=10", "sigma"},
		{"reset; probability=2", "probability"},
		{"file_expiry; ttl_seconds=1", "files"},
		{"reset; operation=getAccount", "targets rules"},
	} {
		resp, body := testkit.Send(t, srv, "GET", "/api/v1/account", "", map[string]string{"Mock-Fault": tc.header, "Authorization": "Bearer " + mediamock.KeyAllScopes}, "")
		assert.Equal(t, 400, resp.StatusCode, tc.header)
		assert.Contains(t, body, "Mock-Fault", tc.header)
		assert.Contains(t, body, tc.reason, tc.header)
	}
}

// A server whose control API is closed by a token ignores the header, and
// says so in its log.
func TestFaultHeaderIgnoredWhenControlsAreClosed(t *testing.T) {
	var log testkit.SyncBuffer
	srv := mediamock.RunT(t, mediamock.WithControlToken("secret"), mediamock.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	resp, err := get(t, freshClient(), srv.BaseURL()+"/account", "Mock-Fault", "reset")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, log.String(), "Mock-Fault header ignored")
}
