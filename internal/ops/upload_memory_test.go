package ops_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

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
//	go test -run '^$' -bench UploadMemory -benchtime 3x ./internal/ops/
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
