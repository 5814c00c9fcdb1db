package main

import (
	"io"
	"log/slog"

	"github.com/mediamock/mediamock/internal/reqlog"
)

// withRequestLines makes the command's handler over w (text or JSON): its
// request lines are written by package reqlog's fast path, byte for byte as
// slog's handler would.
func withRequestLines(w io.Writer, json bool, o *slog.HandlerOptions) slog.Handler {
	return reqlog.New(w, json, o)
}
