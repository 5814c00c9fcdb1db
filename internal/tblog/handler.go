// Package tblog is a log/slog handler that writes a server's log lines to
// a test's log (t.Logf), so that they show with the test that failed.
package tblog

import (
	"context"
	"log/slog"
)

// Logger is the part of testing.TB the handler writes to.
type Logger interface {
	Logf(format string, args ...any)
}

// Handler writes records at or above its level to t.Logf, one line each:
// "mediamock: LEVEL message key=value ...".
type Handler struct {
	t     Logger
	level slog.Level
	attrs []slog.Attr
}

// New returns a handler writing records at or above level to t.
func New(t Logger, level slog.Level) *Handler { return &Handler{t: t, level: level} }

// Enabled reports whether l is at or above the handler's level.
func (h *Handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

// Handle writes r as one line.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
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

// WithAttrs returns a handler that writes attrs on every line.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{t: h.t, level: h.level, attrs: append(append([]slog.Attr{}, h.attrs...), attrs...)}
}

// WithGroup returns the handler itself: groups are not shown.
func (h *Handler) WithGroup(string) slog.Handler { return h }
