package edge_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/internal/testkit"
)

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
// TestRecordKeepsCappedCopies; the heap it saves is measured by
// BenchmarkJournalRetention.
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
//	go test -run '^$' -bench JournalRetention -benchtime 1x ./internal/edge/
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

// TestJournalKeepsTraceparent: a well-formed traceparent header is kept in
// the request's journal entry; an ill-formed one is not.
func TestJournalKeepsTraceparent(t *testing.T) {
	srv := mediamock.RunT(t, func(o *mediamock.Options) { o.NoListener = true })
	const good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tp := range []string{good, "00-not-a-trace"} {
		req, err := http.NewRequest("GET", srv.BaseURL()+"/account", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+mediamock.KeyAllScopes)
		req.Header.Set("Traceparent", tp)
		resp, body := testkit.Do(t, srv, req)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
	}
	status, body := testkit.Control(t, srv, "GET", "/journal", "")
	require.Equal(t, http.StatusOK, status, body)
	var journal struct {
		Entries []controlapi.JournalEntry `json:"entries"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &journal))
	require.Len(t, journal.Entries, 2)
	assert.Empty(t, journal.Entries[0].Traceparent, "the ill-formed one, newest first")
	assert.Equal(t, good, journal.Entries[1].Traceparent)
	assert.Contains(t, body, `"traceparent":"`+good+`"`)
}
