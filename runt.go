package mediamock

import (
	"context"
	"log/slog"
	"path/filepath"
)

// TB is the part of testing.TB that RunT uses; *testing.T and *testing.B
// satisfy it. It keeps the testing package out of binaries that import
// this one.
type TB interface {
	Helper()
	Cleanup(func())
	TempDir() string
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
}

// RunT starts a server for a test: on a random loopback port, with its
// state file in t.TempDir(), in strict mode (a response that breaks
// openapi.json becomes a 500 that says why), with its warnings and errors
// logged to t.Log, stopped when the test ends. It fails the test if the
// server cannot start. Options may adjust the defaults.
func RunT(t TB, opts ...func(*Options)) *Server {
	t.Helper()
	o := Options{DBPath: filepath.Join(t.TempDir(), "state.db"), Strict: true,
		Logger: slog.New(&tbHandler{t: t, level: slog.LevelWarn})}
	for _, f := range opts {
		f(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatalf("mediamock: cannot start the server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("mediamock: close: %v", err)
		}
	})
	return s
}

// tbHandler writes log records at or above level to t.Log.
type tbHandler struct {
	t     TB
	level slog.Level
	attrs []slog.Attr
}

func (h *tbHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *tbHandler) Handle(_ context.Context, r slog.Record) error {
	line := "mediamock: " + r.Level.String() + " " + r.Message
	add := func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	h.t.Logf("%s", line)
	return nil
}

func (h *tbHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &tbHandler{t: h.t, level: h.level, attrs: append(append([]slog.Attr{}, h.attrs...), attrs...)}
}

func (h *tbHandler) WithGroup(string) slog.Handler { return h }
