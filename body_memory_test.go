package mediamock_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/testkit"
)

// bigJSONUpload is an upload's JSON body of about size bytes: a PNG as a
// data: URI.
func bigJSONUpload(tb testing.TB, size int) []byte {
	tb.Helper()
	png := testkit.PaddedPNG(tb, size*3/4-200)
	body, err := json.Marshal(map[string]string{"image_url": testkit.DataURI("image/png", png), "title": "big"})
	require.NoError(tb, err)
	return body
}

// jsonBodies sends n bodies at once through door ("rest": POST
// /api/v1/uploads; "mcp": a create_upload tool call in a session) and
// returns the heap in use before and at its peak while they ran.
func jsonBodies(tb testing.TB, srv *mediamock.Server, door string, body []byte, n int) (before, peak uint64) {
	tb.Helper()
	h := srv.Handler()
	var mcpHeader http.Header
	payload := body
	if door == "mcp" {
		mcpHeader = http.Header{"Authorization": {"Bearer " + mediamock.KeyBusiness}, "Content-Type": {"application/json"},
			"Accept": {"application/json, text/event-stream"}}
		send := func(msg string) *httptest.ResponseRecorder {
			req := httptest.NewRequest("POST", "/mcp", strings.NewReader(msg))
			req.Host = "localhost"
			req.Header = mcpHeader.Clone()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec
		}
		rec := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bodies","version":"1"}}}`)
		require.Equal(tb, http.StatusOK, rec.Code)
		mcpHeader.Set("Mcp-Session-Id", rec.Header().Get("Mcp-Session-Id"))
		mcpHeader.Set("Mcp-Protocol-Version", "2025-11-25")
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		payload = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_upload","arguments":%s}}`, body))
	}
	before = testkit.HeapInUse()
	var wg sync.WaitGroup
	peak = testkit.PeakHeap(func() {
		for range n {
			wg.Go(func() {
				var req *http.Request
				if door == "mcp" {
					req = httptest.NewRequest("POST", "/mcp", bytes.NewReader(payload))
					req.Host = "localhost"
					req.Header = mcpHeader.Clone()
				} else {
					req = httptest.NewRequest("POST", "/api/v1/uploads", bytes.NewReader(payload))
					req.Header.Set("Authorization", "Bearer "+mediamock.KeyBusiness)
					req.Header.Set("Content-Type", "application/json")
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if door == "mcp" {
					assert.Contains(tb, rec.Body.String(), `"status":"completed"`, "%.300s", rec.Body)
				} else {
					assert.Equal(tb, http.StatusCreated, rec.Code, "%.300s", rec.Body)
				}
			})
		}
		wg.Wait()
	})
	return before, peak
}

// BenchmarkJSONBodyMemory sends 32 JSON bodies of 10 MB at once (an
// upload's data: URI) through REST and MCP, and reports the highest heap
// in use above the heap before (peak-MB), the bytes in flight
// (flight-MB) and their ratio (peak/flight), and the heap retained after
// (retained-MB). The state is reset between iterations, out of the timing.
//
//	go test -run '^$' -bench JSONBodyMemory -benchtime 2x .
func BenchmarkJSONBodyMemory(b *testing.B) {
	const n, size = 32, 10 << 20
	for _, door := range []string{"rest", "mcp"} {
		b.Run(door, func(b *testing.B) {
			srv := mediamock.RunT(b, mediamock.WithLogger(nil))
			body := bigJSONUpload(b, size)
			flight := uint64(n * len(body))
			var worst int64
			start := testkit.HeapInUse()
			for b.Loop() {
				before, peak := jsonBodies(b, srv, door, body, n)
				worst = max(worst, int64(peak)-int64(before))
				b.StopTimer()
				if err := srv.Reset(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(worst)/(1<<20), "peak-MB")
			b.ReportMetric(float64(flight)/(1<<20), "flight-MB")
			b.ReportMetric(float64(worst)/float64(flight), "peak/flight")
			b.ReportMetric(float64(int64(testkit.HeapInUse())-int64(start))/(1<<20), "retained-MB")
		})
	}
}
