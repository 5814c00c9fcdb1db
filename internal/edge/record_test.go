package edge

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/report"
	"github.com/mediamock/mediamock/internal/testkit"
	"github.com/mediamock/mediamock/sim"
)

// within reports whether s's bytes lie inside of's: s is a substring of it
// and keeps all of it alive.
func within(s, of string) bool {
	if len(s) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(of)))
	return p >= lo && p < lo+uintptr(len(of))
}

// The journal keeps every string of an entry as a copy of at most
// journal.MaxString bytes: a kept substring of the request line would keep
// the whole of what the client sent alive (BenchmarkJournalRetention
// measures the heap that costs).
func TestRecordKeepsCappedCopies(t *testing.T) {
	eng := testkit.Engine(t)
	env := &Env{Eng: eng, WallClock: time.Now, Journal: journal.New(10, 64), Journals: journal.NewRings(10, 64)}

	line := "GET /api/v1/assets?q=" + strings.Repeat("q", 4*journal.MaxString) + " " + strings.Repeat("m", 2*journal.MaxString)
	brew := "BREW" + line[3:]
	query := line[strings.Index(line, "q=") : strings.Index(line, "q=")+4*journal.MaxString]
	tests := []struct {
		name  string
		entry journal.Entry
		field func(journal.Entry) string
		from  string // what the recorded string was cut from
		want  int    // its recorded length
	}{
		{"a long query", journal.Entry{Method: "GET", Query: query}, func(e journal.Entry) string { return e.Query }, line, journal.MaxString},
		{"a long MCP method", journal.Entry{Method: "POST", MCPMethod: line[len(line)-2*journal.MaxString:]},
			func(e journal.Entry) string { return e.MCPMethod }, line, journal.MaxString},
		{"a short path is copied too", journal.Entry{Method: "GET", Path: line[4:17]}, func(e journal.Entry) string { return e.Path }, line, 13},
		{"an unknown method", journal.Entry{Method: brew[:4]}, func(e journal.Entry) string { return e.Method }, brew, 4},
		{"a long content type", journal.Entry{Method: "POST", RequestContentType: line}, func(e journal.Entry) string { return e.RequestContentType },
			line, journal.MaxString},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env.Journal.Clear()
			env.Record(tt.entry, time.Now(), Bodies{})
			got := env.Journal.List(journal.Filter{})
			require.Len(t, got, 1)
			s := tt.field(got[0])
			assert.Len(t, s, tt.want)
			assert.False(t, within(s, tt.from), "kept as a substring of the request")
		})
	}
	t.Run("the standard methods are the constants", func(t *testing.T) {
		env.Journal.Clear()
		env.Record(journal.Entry{Method: line[:3]}, time.Now(), Bodies{})
		got := env.Journal.List(journal.Filter{})
		require.Len(t, got, 1)
		assert.Equal(t, "GET", got[0].Method)
		assert.False(t, within(got[0].Method, line))
	})
}

// BenchmarkRecord is what the journal costs a request: the entry stamped
// with its times and duration, its strings capped, and kept in the ring.
//
//	go test -run '^$' -bench Record ./internal/edge
func BenchmarkRecord(b *testing.B) {
	world, err := fixtures.Load("", 0)
	require.NoError(b, err)
	eng, err := sim.Open(sim.Config{Path: filepath.Join(b.TempDir(), "state.db"), World: world,
		Clock: sim.NewClock(sim.ClockManual, sim.DefaultEpoch, nil)})
	require.NoError(b, err)
	b.Cleanup(func() { eng.Close() })
	env := &Env{Eng: eng, WallClock: time.Now, Journal: journal.New(500, 1024), Journals: journal.NewRings(100, 1024)}
	body := []byte(`{"modality":"image","model_id":"imagen-4","prompt":"a benchmark of lighthouses at dusk"}`)
	b.Run("creation", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			env.Record(journal.Entry{ID: "req_1", Front: "rest", Method: "POST", Path: "/api/v1/generations", Operation: "createGeneration",
				Status: 201, WorkspaceID: 1}, time.Now(), Bodies{Request: body, Response: body, RequestBytes: int64(len(body)), ResponseBytes: int64(len(body))})
		}
	})
	// A list page as the edge records it, with the headers it keeps, and
	// then with the client report following the journal (report.Tally):
	// what the report costs every request.
	page := bytes.Repeat([]byte(`{"id":61,"object":"asset","status":"completed"},`), 40)
	reqHeaders := journal.AppendHeaders([]byte("Host: 127.0.0.1:8080\n"), http.Header{"Authorization": {"Bearer mk_test_bench"},
		"User-Agent": {"Go-http-client/1.1"}, "Accept-Encoding": {"gzip"}})
	resHeaders := journal.AppendHeaders(nil, http.Header{"Content-Type": {"application/json"}, "Content-Length": {"19342"},
		"X-Request-Id": {"req_000000000001"}, "X-Ratelimit-Limit": {"1000000000"}, "X-Ratelimit-Remaining": {"999999999"},
		"X-Ratelimit-Reset": {"1767603660"}, "Date": {"Mon, 05 Jan 2026 09:00:00 GMT"}})
	list := func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			env.Record(journal.Entry{ID: "req_1", Front: "rest", Method: "GET", Path: "/api/v1/assets", Query: "limit=20", Operation: "listAssets",
				Status: 200, WorkspaceID: 1}, time.Now(), Bodies{Response: page, ResponseBytes: int64(len(page)),
				RequestHeaders: reqHeaders, ResponseHeaders: resHeaders})
		}
	}
	b.Run("list page", list)
	env.Journal.Follow(func() journal.Observer { return report.NewTally(eng.JobOf) })
	b.Run("list page, reported", list)
	b.Run("headers kept", func(b *testing.B) {
		req := http.Header{"Authorization": {"Bearer mk_test_bench"}, "User-Agent": {"Go-http-client/1.1"}, "Accept-Encoding": {"gzip"}}
		res := http.Header{"Content-Type": {"application/json"}, "Content-Length": {"19342"}, "X-Request-Id": {"req_000000000001"},
			"X-Ratelimit-Limit": {"1000000000"}, "X-Ratelimit-Remaining": {"999999999"}, "X-Ratelimit-Reset": {"1767603660"},
			"Date": {"Mon, 05 Jan 2026 09:00:00 GMT"}}
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			buf = journal.AppendHeaders(append(buf[:0], "Host: 127.0.0.1:8080\n"...), req)
			buf = journal.AppendHeaders(buf[:0], res)
		}
	})
}
