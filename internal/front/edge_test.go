package front

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mediamock/mediamock/internal/journal"
	"github.com/mediamock/mediamock/internal/testkit"
)

// lockedBuffer collects log lines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestPanicBecomesErrorObjectAndLogLine(t *testing.T) {
	var logs lockedBuffer
	eng := testkit.Engine(t)
	env := &Env{Eng: eng, Log: slog.New(slog.NewTextHandler(&logs, nil)), WallClock: time.Now, Stop: context.Background(),
		Coverage: &journal.Counts{}, MaxBodyBytes: 1 << 20}
	rec := httptest.NewRecorder()
	door := Door{Front: "rest", Journaled: true}
	env.Serve(rec, httptest.NewRequest("GET", "/boom", nil), door, func(*Writer, *http.Request) { panic("kaboom") })
	body, _ := io.ReadAll(rec.Result().Body)
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.JSONEq(t, `{"error":{"code":"internal_error","message":"Internal server error."}}`, string(body))
	assert.NotEmpty(t, rec.Header().Get("X-Request-Id"))
	assert.Equal(t, "Mon, 05 Jan 2026 09:00:00 GMT", rec.Header().Get("Date"), "the simulated clock's date")
	assert.Contains(t, logs.String(), "panic serving request")
	assert.Contains(t, logs.String(), "kaboom")
}

func TestRequestIDs(t *testing.T) {
	for n, want := range map[uint64]string{1: "req_000000000001", 42: "req_000000000042", 999999999999: "req_999999999999", 1000000000000: "req_1000000000000"} {
		if got := requestID(n); got != want {
			t.Errorf("requestID(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestHTTPDateFollowsTheClock(t *testing.T) {
	a := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	if got := httpDate(a); got != "Mon, 05 Jan 2026 09:00:00 GMT" {
		t.Fatal(got)
	}
	if got := httpDate(a.Add(500 * time.Millisecond)); got != "Mon, 05 Jan 2026 09:00:00 GMT" {
		t.Fatal(got)
	}
	if got := httpDate(a.Add(time.Second).In(time.FixedZone("x", 3600))); got != "Mon, 05 Jan 2026 09:00:01 GMT" {
		t.Fatal(got)
	}
}

// TestTableAnswersAsTheRouter compares the table's answers for paths
// without variables (kept per method) with the router's own.
func TestTableAnswersAsTheRouter(t *testing.T) {
	tb := NewTable("/api")
	tb.Add("GET", "/things", "listThings")
	tb.Add("POST", "/things", "createThing")
	tb.Add("GET", "/things/{id}", "getThing")
	tb.Add("GET", "/{kind}/special", "byKind")
	tb.Add("GET", "/x/special", "special")
	tb.Seal()
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/things"}, {"POST", "/api/things"}, {"DELETE", "/api/things"}, {"HEAD", "/api/things"},
		{"GET", "/api/things/7"}, {"GET", "/api/x/special"}, {"PUT", "/api/x/special"}, {"GET", "/api/y/special"},
		{"GET", "/api/things/"}, {"GET", "/api//things"}, {"GET", "/nope"},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		got, want := tb.Match(r), tb.route(r)
		if got.Name != want.Name || got.Allow != want.Allow || len(got.Vars) != len(want.Vars) {
			t.Errorf("%s %s: table %+v, router %+v", c.method, c.path, got, want)
		}
	}
	if m := tb.Match(httptest.NewRequest("GET", "/api/x/special", nil)); m.Name != "byKind" {
		t.Errorf("an earlier route with a variable wins, as in the router: %+v", m)
	}
	if m := tb.Match(httptest.NewRequest("DELETE", "/api/things", nil)); m.Allow != "GET, POST" {
		t.Errorf("other methods: %+v", m)
	}
}
