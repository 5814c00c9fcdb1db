package reqlog

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// BenchmarkRequestLine is the cost of one request line, as the edge hands
// it to the handler, written by slog's handler alone (plain) and by the
// fast path (fast), in both formats. Compare the two by alternating runs:
//
//	for i in 1 2 3 4 5; do for p in plain fast; do
//	  go test -run XXX -bench "RequestLine/.*/$p" -benchmem ./internal/reqlog/
//	done; done
func BenchmarkRequestLine(b *testing.B) {
	for _, format := range []string{"text", "json"} {
		for _, path := range []string{"plain", "fast"} {
			b.Run(format+"/"+path, func(b *testing.B) {
				json := format == "json"
				h := Plain(io.Discard, json, nil)
				if path == "fast" {
					h = New(io.Discard, json, nil)
				}
				// As the edge makes it (internal/edge's record), once: the
				// benchmark is the handler's cost.
				rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
				rec.AddAttrs(slog.String("method", "GET"), slog.String("path", "/api/v1/assets"), slog.Int("status", 200),
					slog.Uint64("workspace", 5), slog.Duration("latency", 1234567),
					slog.String("request_id", "req_00000000000000000042"))
				b.ReportAllocs()
				for b.Loop() {
					if err := h.Handle(context.Background(), rec); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
