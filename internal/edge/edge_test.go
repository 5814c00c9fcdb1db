package edge

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
