package report_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/report"
	"github.com/mediamock/mediamock/internal/testkit"
)

// stuck is a creation whose job never ends: its polls all come before it
// is seen done.
const stuck = `{"modality":"image","model_id":"imagen-4","prompt":"a lighthouse at dusk [mock:stuck]"}`

// sandboxReport is a sandbox's report, asked with its control token.
func sandboxReport(t *testing.T, srv *mediamock.Server, sb *mediamock.Sandbox, format string) []byte {
	t.Helper()
	status, body := testkit.Control(t, srv, "GET", "/report?format="+format, "", "Authorization", "Bearer "+sb.ControlToken)
	require.Equal(t, http.StatusOK, status, body)
	return []byte(body)
}

// A sandbox's journal holds its last 100 requests; its report keeps every
// one. A client that created the same generation twice (the first answer
// lost), then polled without wait_seconds 2,000 times, still gets its
// duplicate creation, with its credits, and the exact count of its polls;
// the report says how many of the examples the journal no longer holds.
func TestSandboxReportOutlivesItsJournal(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Seed = 7 })
	sb := srv.Sandbox(t)
	_, err := sb.AddFault(mediamock.FaultSpec{Kind: "reset", Operation: "createGeneration", First: 1})
	require.NoError(t, err)
	c := &client{t: t, srv: srv, key: sb.APIKey}

	status, _, _ := c.do("POST", "/generations", stuck)
	require.Zero(t, status, "the answer is lost")
	status, _, data := c.do("POST", "/generations", stuck)
	require.Equal(t, http.StatusCreated, status, "%s", data)
	id := decode(t, data).Assets[0].ID
	const polls = 2000
	for range polls {
		c.sleep(time.Second) // 60 a minute: the sandbox's plan lets every one through
		status, _, data = c.do("GET", fmt.Sprintf("/generations/%d", id), "")
		require.Equal(t, http.StatusOK, status, "%s", data)
	}
	require.Len(t, sb.Journal(mediamock.JournalFilter{Limit: 1000}), mediamock.SandboxJournalSize, "the journal kept its last 100")

	var r report.Report
	require.NoError(t, json.Unmarshal(sandboxReport(t, srv, sb, "json"), &r))
	assert.Equal(t, "sandbox "+sb.ID, r.Scope)
	assert.Equal(t, polls+2, r.Summary.Requests, "every request, not the journal's 100")
	assert.EqualValues(t, polls+2-mediamock.SandboxJournalSize, r.Summary.Dropped)
	assert.Equal(t, []string{"poll-without-wait", "duplicate-creation"}, ids(r))

	dup := finding(t, r, "duplicate-creation")
	assert.Equal(t, 1, dup.Count)
	assert.Positive(t, dup.Credits, "what it cost twice")
	assert.Empty(t, dup.Seqs, "the journal no longer holds the creations")
	assert.Equal(t, 2, dup.ExamplesDropped, "the lost creation and its repeat")

	polled := finding(t, r, "poll-without-wait")
	assert.Equal(t, 1, polled.Count, "one job")
	assert.Contains(t, polled.Detail, "1 job polled 3 or more times without wait_seconds, with 2,000 reads before it was seen done.")
	assert.Equal(t, []int64{polls + 2}, polled.Seqs, "its last read is still in the journal")
	assert.Equal(t, 3, polled.ExamplesDropped, "its first three reads are not")
	require.Len(t, r.Jobs, 2, "both creations made a job")
	assert.Equal(t, polls, r.Jobs[1].Reads, "the exact count of its polls")
	assert.Zero(t, r.Jobs[0].Reads, "the lost creation's job was never read")

	text := string(sandboxReport(t, srv, sb, "text"))
	assert.Contains(t, text, "Client report for sandbox "+sb.ID+": 2,002 requests (the journal no longer holds 1,902 older ones")
	assert.Contains(t, text, "2 example requests are no longer in the journal.")

	// The server's report holds the same findings, from its own journal.
	var whole report.Report
	status, body := testkit.Control(t, srv, "GET", "/report?workspace_id="+strconv.FormatUint(sb.WorkspaceID, 10), "")
	require.Equal(t, http.StatusOK, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &whole))
	assert.Equal(t, ids(r), ids(whole))
	assert.Equal(t, r.Summary.Requests, whole.Summary.Requests)

	// A reset of the sandbox resets its report, here and in the server's.
	require.NoError(t, sb.Reset())
	require.NoError(t, json.Unmarshal(sandboxReport(t, srv, sb, "json"), &r))
	assert.Empty(t, r.Findings)
	assert.Zero(t, r.Summary.Requests)
	status, body = testkit.Control(t, srv, "GET", "/report?workspace_id="+strconv.FormatUint(sb.WorkspaceID, 10), "")
	require.Equal(t, http.StatusOK, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &whole))
	assert.Empty(t, whole.Findings, "the server forgot the sandbox's workspace too")
}

// A workspace follows its last report.KeepJobs jobs one by one, so that
// its memory stays bounded however many it makes: a job it no longer
// follows still counts in the findings it showed (here, polled without
// wait_seconds) and in the number of jobs.
func TestAWorkspaceFollowsABoundedNumberOfJobs(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.Seed = 7 })
	credits := 1 << 30
	sb, err := srv.NewSandbox(mediamock.SandboxSpec{Credits: &credits, RateLimitPerMinute: 1 << 30})
	require.NoError(t, err)
	c := &client{t: t, srv: srv, key: sb.APIKey}

	status, _, data := c.do("POST", "/generations", stuck)
	require.Equal(t, http.StatusCreated, status, "%s", data)
	polled := decode(t, data).Assets[0].ID
	for range 3 {
		status, _, data = c.do("GET", fmt.Sprintf("/generations/%d", polled), "")
		require.Equal(t, http.StatusOK, status, "%s", data)
	}
	for range report.KeepJobs {
		status, _, data = c.do("POST", "/generations", create)
		require.Equal(t, http.StatusCreated, status, "%s", data)
	}

	r, err := sb.Report()
	require.NoError(t, err)
	assert.Equal(t, report.KeepJobs+1, r.Summary.Jobs, "every job made")
	require.Len(t, r.Jobs, report.KeepJobs, "the last ones, one by one")
	assert.NotEqual(t, polled, r.Jobs[0].ID, "the first is no longer followed")
	f := finding(t, r, "poll-without-wait")
	assert.Equal(t, 1, f.Count, "the job no longer followed still counts")
	assert.Contains(t, f.Detail, "1 job polled 3 or more times without wait_seconds, with 3 reads")
	assert.Equal(t, 3, len(f.Seqs)+f.ExamplesDropped, "its reads are cited (the sandbox's journal of 100 no longer holds them)")
}

// Clearing a journal starts its report again: the report is the record of
// what the journal recorded since it began.
func TestClearingTheJournalStartsTheReportAgain(t *testing.T) {
	c := newClient(t, mediamock.KeyAllScopes)
	for range 2 {
		status, _, _ := c.do("GET", "/generations/999999", "")
		require.Equal(t, http.StatusNotFound, status)
	}
	assert.Equal(t, []string{"poll-unknown-id"}, ids(c.report()))
	c.srv.ClearJournal()
	r := c.report()
	assert.Empty(t, r.Findings)
	assert.Zero(t, r.Summary.Requests)
}

// rss is the process's resident set, from /proc; 0 where there is none.
func rss() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkSandboxReports measures what 100 sandboxes of one server keep
// for their reports while their clients send 5,000 requests each (a
// creation every 50, polls without wait_seconds, reads of unknown ids, the
// clock a second on every 100 requests: jobs, minutes and findings in
// each sandbox, every journal full): the rise of the process's resident
// set (rss-MB, after a collection; the target is under 50) and of the
// heap in use (heap-MB), from the sandboxes made to the requests sent.
//
//	go test -run '^$' -bench SandboxReports -benchtime 1x ./internal/report/
func BenchmarkSandboxReports(b *testing.B) {
	const sandboxes, requests = 100, 5000
	for b.Loop() {
		b.StopTimer()
		srv := mediamock.RunT(b, mediamock.WithLogger(nil))
		h := srv.Handler()
		var boxes []*mediamock.Sandbox
		for range sandboxes {
			sb, err := srv.NewSandbox(mediamock.SandboxSpec{})
			require.NoError(b, err)
			boxes = append(boxes, sb)
		}
		ids := make([]int64, sandboxes)
		send := func(sb *mediamock.Sandbox, method, path, body string) (int, []byte) {
			req, err := http.NewRequest(method, srv.BaseURL()+path, strings.NewReader(body))
			require.NoError(b, err)
			req.Header.Set("Authorization", "Bearer "+sb.APIKey)
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			w := &recorder{header: http.Header{}}
			h.ServeHTTP(w, req)
			return w.status, w.body
		}
		runtime.GC()
		debug.FreeOSMemory()
		rssBefore, heapBefore := rss(), testkit.HeapInUse()
		b.StartTimer()
		for i := range requests {
			if i%100 == 0 {
				require.NoError(b, srv.Advance(time.Second))
			}
			for k, sb := range boxes {
				switch {
				case i%50 == 0:
					status, body := send(sb, "POST", "/generations", create)
					if status == http.StatusCreated {
						var g generation
						require.NoError(b, json.Unmarshal(body, &g))
						ids[k] = g.Assets[0].ID
					}
				case i%17 == 0:
					send(sb, "GET", "/generations/999999", "")
				default:
					send(sb, "GET", fmt.Sprintf("/generations/%d", ids[k]), "")
				}
			}
		}
		b.StopTimer()
		for _, sb := range boxes[:1] {
			r, err := sb.Report()
			require.NoError(b, err)
			require.Equal(b, requests, r.Summary.Requests)
			require.NotEmpty(b, r.Findings)
		}
		runtime.GC()
		debug.FreeOSMemory()
		rssAfter, heapAfter := rss(), testkit.HeapInUse()
		b.ReportMetric(float64(int64(rssAfter)-int64(rssBefore))/(1<<20), "rss-MB")
		b.ReportMetric(float64(int64(heapAfter)-int64(heapBefore))/(1<<20), "heap-MB")
		b.StartTimer()
	}
}

// recorder is a ResponseWriter that keeps the status and the body: an
// in-process client of the handler.
type recorder struct {
	header http.Header
	status int
	body   []byte
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body = append(r.body, p...)
	return len(p), nil
}
