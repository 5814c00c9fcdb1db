package control_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

type waitAnswer struct {
	status int
	body   string
}

// startWait asks the control API to wait for a request, in the
// background, and returns where its answer arrives.
func startWait(t *testing.T, srv *mediamock.Server, query string, hdr ...string) <-chan waitAnswer {
	t.Helper()
	req, err := http.NewRequest("GET", srv.URL()+"/_mock/journal/wait?"+query, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	got := make(chan waitAnswer, 1)
	go func() {
		resp, err := srv.Client().Do(req)
		if err != nil {
			got <- waitAnswer{body: err.Error()}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- waitAnswer{resp.StatusCode, string(b)}
	}()
	return got
}

// waits is how many waits the journal of a scope has in progress.
func waits(t *testing.T, srv *mediamock.Server, hdr ...string) float64 {
	status, body := ctl(t, srv, "GET", "/journal?limit=1", "", hdr...)
	require.Equal(t, http.StatusOK, status, body)
	return testkit.JSON(t, body)["waiting"].(float64)
}

// TestWaitForARequest: a wait started before the client's request answers
// with that request as soon as it is journaled, not with the ones that do
// not match; `after` finds a request made before the wait; a wait that sees
// nothing answers 404 request_not_seen; a sandbox's wait never returns
// another sandbox's requests.
func TestWaitForARequest(t *testing.T) {
	srv := mediamock.RunT(t, manual)
	got := startWait(t, srv, "operation=createGeneration&timeout=30")
	testkit.Poll(t, "the wait is in progress", func() bool { return waits(t, srv) == 1 })
	testkit.API(t, srv, "GET", "/account", "") // does not match
	testkit.API(t, srv, "POST", "/generations", `{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse"}`)
	answer := testkit.Receive(t, got, "the wait's answer")
	require.Equal(t, http.StatusOK, answer.status, answer.body)
	e := testkit.JSON(t, answer.body)
	assert.Equal(t, "createGeneration", e["operation"])
	assert.Contains(t, e["request_body"], "a lighthouse")
	assert.EqualValues(t, 2, e["seq"])

	// after: a request already journaled counts.
	status, body := ctl(t, srv, "GET", "/journal/wait?operation=getAccount&after=0&timeout=0", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.EqualValues(t, 1, testkit.JSON(t, body)["seq"])
	status, body = ctl(t, srv, "GET", "/journal?after=1", "")
	require.Equal(t, http.StatusOK, status, body)
	assert.Len(t, testkit.JSON(t, body)["entries"], 1, "the journal's after")

	// Nothing matches: request_not_seen, with where the journal is.
	status, body = ctl(t, srv, "GET", "/journal/wait?operation=deleteAsset&after=0&timeout=0", "")
	assert.Equal(t, http.StatusNotFound, status, body)
	assert.Equal(t, "request_not_seen", testkit.ErrorCode(t, body))
	assert.EqualValues(t, 2, testkit.JSON(t, body)["error"].(map[string]any)["details"].(map[string]any)["seq"])
	status, _ = ctl(t, srv, "GET", "/journal/wait?timeout=56", "")
	assert.Equal(t, http.StatusBadRequest, status, "at most 55 s")

	// Sandboxes: each waits on its own journal.
	a, b := createSandbox(t, srv, `{}`), createSandbox(t, srv, `{}`)
	asA := []string{"Authorization", "Bearer " + a.ControlToken}
	got = startWait(t, srv, "timeout=30", asA...)
	testkit.Poll(t, "the sandbox's wait is in progress", func() bool { return waits(t, srv, asA...) == 1 })
	restAs(t, srv, b.APIKey, "GET", "/account", "")
	status, body = ctl(t, srv, "GET", "/journal/wait?after=0&timeout=0", "", asA...)
	assert.Equal(t, http.StatusNotFound, status, "another sandbox's request: %s", body)
	restAs(t, srv, a.APIKey, "GET", "/account", "")
	answer = testkit.Receive(t, got, "the sandbox's wait")
	require.Equal(t, http.StatusOK, answer.status, answer.body)
	assert.Equal(t, a.ID, testkit.JSON(t, answer.body)["sandbox_id"])
}

// TestAwaitRequest: the Go API's wait, on a server and on a sandbox.
func TestAwaitRequest(t *testing.T) {
	srv := mediamock.RunT(t, manual)
	sb := srv.Sandbox(t)
	seq := sb.JournalSeq()
	got := make(chan mediamock.JournalEntry, 1)
	go func() {
		e, err := sb.AwaitRequest(context.Background(), mediamock.JournalFilter{After: seq, Operation: "getAccount"})
		assert.NoError(t, err)
		got <- e
	}()
	restAs(t, srv, sb.APIKey, "GET", "/account", "")
	e := testkit.Receive(t, got, "the sandbox's request")
	assert.Equal(t, sb.ID, e.SandboxID)
	assert.Equal(t, seq+1, e.Seq)
	assert.Equal(t, fmt.Sprint(e.Seq), fmt.Sprint(srv.JournalSeq()), "one request on the server too")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := srv.AwaitRequest(ctx, mediamock.JournalFilter{After: srv.JournalSeq()})
	assert.ErrorIs(t, err, context.Canceled)
}

// BenchmarkThousandHTTPWaits: 1,000 waits for a request in progress at
// once over HTTP; reports the memory they hold, client and server together
// (one process: an upper bound of the server's share), and the time one
// matching request takes to answer them all.
func BenchmarkThousandHTTPWaits(b *testing.B) {
	const n = 1000
	srv := mediamock.RunT(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0}}
	defer client.CloseIdleConnections()
	waiting := func() float64 {
		resp, err := client.Get(srv.URL() + "/_mock/journal?limit=1")
		require.NoError(b, err)
		defer resp.Body.Close()
		var j struct{ Waiting float64 }
		require.NoError(b, json.NewDecoder(resp.Body).Decode(&j))
		return j.Waiting
	}
	for range b.N {
		before := testkit.HeapInUse()
		var stacks runtime.MemStats
		runtime.ReadMemStats(&stacks)
		done := make(chan int, n)
		for range n {
			go func() {
				resp, err := client.Get(srv.URL() + "/_mock/journal/wait?operation=getAccount&timeout=50")
				if err != nil {
					done <- 0
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				done <- resp.StatusCode
			}()
		}
		testkit.Poll(b, "every wait in progress", func() bool { return waiting() == n })
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		held := float64(testkit.HeapInUse()-before+after.StackInuse-stacks.StackInuse) / n
		testkit.REST(b, srv, mediamock.KeyAllScopes, "GET", "/account", nil)
		for range n {
			if code := <-done; code != http.StatusOK {
				b.Fatalf("a wait answered %d", code)
			}
		}
		b.ReportMetric(held, "bytes/wait")
	}
}
