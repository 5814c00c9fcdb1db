package mediamock_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// uploadConcurrently posts form n times at once to h with the business
// key, checks that each upload is created, and returns the highest heap in
// use seen as the uploads end.
func uploadConcurrently(tb testing.TB, h http.Handler, form []byte, ctype string, n int) uint64 {
	tb.Helper()
	var peak uint64
	var peakMu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req := httptest.NewRequest("POST", "/api/v1/uploads", bytes.NewReader(form))
			req.Header.Set("Authorization", "Bearer "+mediamock.KeyBusiness)
			req.Header.Set("Content-Type", ctype)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			assert.Equal(tb, http.StatusCreated, rec.Code, "%.300s", rec.Body)
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peakMu.Lock()
			peak = max(peak, m.HeapInuse)
			peakMu.Unlock()
		})
	}
	wg.Wait()
	return peak
}

// Finished uploads leave nothing behind: after 8 concurrent uploads of
// about 2 MiB, the heap comes back near where it was. An upload kept whole
// would leave 16 MiB; the bound is half that. The measure at scale is
// BenchmarkUploadMemory.
func TestUploadsLeaveNoMemoryBehind(t *testing.T) {
	const uploads, size = 8, 2 << 20
	srv := mediamock.RunT(t, mediamock.WithLogger(nil))
	form, ctype := testkit.UploadForm(t, size)

	before := testkit.HeapInUse()
	peak := uploadConcurrently(t, srv.Handler(), form, ctype, uploads)
	after := testkit.HeapInUse()
	retained := int64(after) - int64(before)
	t.Logf("heap in use: before %d MB, peak seen %d MB, after GC %d MB (retained %+d KB) for %d uploads of %d MB",
		before>>20, peak>>20, after>>20, retained>>10, uploads, size>>20)
	assert.Less(t, retained, int64(uploads*size/2), "retained after GC")
}

// BenchmarkUploadMemory measures the heap of 32 concurrent uploads of about
// 10 MiB each (the size limit): the highest heap in use seen while they
// end (peak-MB) and what stays in use after a collection once every
// iteration is done (retained-MB). The state is reset between iterations,
// out of the timing, so that the state file does not grow with b.N.
//
//	go test -run '^$' -bench UploadMemory -benchtime 3x .
func BenchmarkUploadMemory(b *testing.B) {
	const uploads, size = 32, 10<<20 - 100<<10
	srv := mediamock.RunT(b, mediamock.WithLogger(nil))
	form, ctype := testkit.UploadForm(b, size)
	b.SetBytes(int64(uploads * len(form)))

	before := testkit.HeapInUse()
	var peak uint64
	for b.Loop() {
		peak = max(peak, uploadConcurrently(b, srv.Handler(), form, ctype, uploads))
		b.StopTimer()
		if err := srv.Reset(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	retained := int64(testkit.HeapInUse()) - int64(before)
	b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
	b.ReportMetric(float64(retained)/(1<<20), "retained-MB")
}

// journalLoad is what BenchmarkJournalRetention and
// TestJournalCapsLongRequests send: requests with a 900 KB query and no
// key, and MCP batches of 50 methods of 150 KB names with a key.
type journalLoad struct {
	query, batch string
}

func newJournalLoad() journalLoad {
	long := strings.Repeat("m", 150<<10)
	var batch []string
	for i := range 50 {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"%s%d"}`, i+1, long, i))
	}
	return journalLoad{query: strings.Repeat("q", 900<<10), batch: "[" + strings.Join(batch, ",") + "]"}
}

// send serves queries requests with the long query and batches MCP batches.
func (l journalLoad) send(tb testing.TB, h http.Handler, queries, batches int) {
	tb.Helper()
	for i := range queries {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", fmt.Sprintf("/api/v1/assets/%d?q=%s", i, l.query), nil))
		require.Equal(tb, http.StatusUnauthorized, rec.Code)
	}
	for range batches {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(l.batch))
		req.Host = "localhost" // the MCP server answers to its own names only
		req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
	}
}

// The journal keeps at most MaxString bytes of a request's query and MCP
// methods, through both doors. That it keeps them as copies, not as
// substrings holding the whole request alive, is pinned exactly by
// internal/edge's TestRecordKeepsCappedCopies; the heap it saves is
// measured by BenchmarkJournalRetention.
func TestJournalCapsLongRequests(t *testing.T) {
	srv := mediamock.RunT(t, mediamock.WithLogger(nil))
	newJournalLoad().send(t, srv.Handler(), 2, 1)
	entries := srv.Journal(mediamock.JournalFilter{})
	require.Len(t, entries, 3)
	var queries, methods int
	for _, e := range entries {
		assert.LessOrEqual(t, len(e.Query), 1024)
		assert.LessOrEqual(t, len(e.MCPMethod), 1024)
		if len(e.Query) == 1024 {
			queries++
		}
		if len(e.MCPMethod) == 1024 {
			methods++
		}
	}
	assert.Equal(t, 2, queries, "the long queries are kept, capped")
	assert.Equal(t, 1, methods, "the batch's methods are kept, capped")
}

// BenchmarkJournalRetention measures what the journal retains (retained-KB,
// after a collection once every iteration is done) of 500 requests with a
// 900 KB query and no key, then 100 MCP batches of long method names with
// a key: a few MB, not the requests (0.9 MB each, 7.7 MB a batch, when a
// kept substring held the whole request alive).
//
//	go test -run '^$' -bench JournalRetention -benchtime 1x .
func BenchmarkJournalRetention(b *testing.B) {
	srv := mediamock.RunT(b, mediamock.WithLogger(nil))
	load := newJournalLoad()
	before := testkit.HeapInUse()
	for b.Loop() {
		load.send(b, srv.Handler(), 500, 100)
	}
	retained := int64(testkit.HeapInUse()) - int64(before)
	b.ReportMetric(float64(retained)/(1<<10), "retained-KB")
}
