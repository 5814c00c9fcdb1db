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
	"github.com/mediamock/mediamock/internal/wire"
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
	env := &Env{Log: slog.New(slog.NewTextHandler(&logs, nil)), WallClock: time.Now, Stop: context.Background(),
		Coverage: &journal.Counts{}, MaxBodyBytes: 1 << 20}
	limit := func(*http.Request) (int64, error) { return env.MaxBodyBytes, wire.TooLarge(env.MaxBodyBytes) }
	rec := httptest.NewRecorder()
	door := Door{Front: "rest", Journaled: true, Check: true, BodyLimit: limit}
	env.Serve(rec, httptest.NewRequest("GET", "/boom", nil), door, func(*Writer, *http.Request) { panic("kaboom") })
	body, _ := io.ReadAll(rec.Result().Body)
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.JSONEq(t, `{"error":{"code":"internal_error","message":"Internal server error."}}`, string(body))
	assert.NotEmpty(t, rec.Header().Get("X-Request-Id"))
	assert.Contains(t, logs.String(), "panic serving request")
	assert.Contains(t, logs.String(), "kaboom")
}
