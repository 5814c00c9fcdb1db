package reqlog

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"
)

// TestRequestLinesAreTheHandlers compares, byte for byte, the lines the
// fast path writes with those slog's own handlers write for the same
// records, in both formats: plain values, values that need quoting or
// escaping (the handler's), other messages, levels and attributes.
func TestRequestLinesAreTheHandlers(t *testing.T) {
	times := []time.Time{
		time.Date(2026, 11, 24, 5, 10, 32, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 100_000, time.FixedZone("CET", 3600)),
		time.Date(2026, 1, 2, 3, 4, 5, 999_999_999, time.FixedZone("x", -5*3600-30*60)),
	}
	paths := []string{"/api/v1/assets", "/api/v1/assets/7", "/a b", "/a=b", `/a"b`, `/a\b`, "/é", "", "/\x01", "/<script>&", "/\xff"}
	type rec struct {
		msg   string
		level slog.Level
		attrs []slog.Attr
	}
	var recs []rec
	for _, p := range paths {
		for _, d := range []time.Duration{0, 1234, 1_234_567, 3 * time.Second} {
			recs = append(recs, rec{"request", slog.LevelInfo, []slog.Attr{
				slog.String("method", "GET"), slog.String("path", p), slog.Int("status", 200),
				slog.Uint64("workspace", 5), slog.Duration("latency", d), slog.String("request_id", "req_000000000042")}})
		}
	}
	recs = append(recs,
		rec{"request", slog.LevelWarn, recs[0].attrs},
		rec{"other", slog.LevelInfo, recs[0].attrs},
		rec{"request", slog.LevelInfo, recs[0].attrs[:5]},
		rec{"request", slog.LevelInfo, append(append([]slog.Attr{}, recs[0].attrs[:5]...), slog.Bool("request_id", true))},
		rec{"request", slog.LevelInfo, append(append([]slog.Attr{}, recs[0].attrs[:5]...), slog.String("a b", "x"))},
		rec{"request", slog.LevelInfo, append(append([]slog.Attr{}, recs[0].attrs[:5]...), slog.Int("request_id", -3))},
	)
	fast := 0
	for _, json := range []bool{false, true} {
		for _, tm := range times {
			for _, r := range recs {
				var want, got bytes.Buffer
				ref := Plain(&want, json, nil)
				h := New(&got, json, nil)
				record := slog.NewRecord(tm, r.level, r.msg, 0)
				record.AddAttrs(r.attrs...)
				if err := ref.Handle(context.Background(), record); err != nil {
					t.Fatal(err)
				}
				if err := h.Handle(context.Background(), record); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Errorf("json=%v:\n got %q\nwant %q", json, got.String(), want.String())
				}
				if r.msg == "request" && len(r.attrs) == 6 && plainString(r.attrs[1].Value.String()) && r.level == slog.LevelInfo && r.attrs[5].Value.Kind() == slog.KindString {
					fast++
				}
			}
		}
	}
	if fast < 100 {
		t.Fatalf("only %d lines took the fast path", fast)
	}
}

// TestRequestLinesKeepTheLogger: the command's logger keeps its level and
// its other lines.
func TestRequestLinesKeepTheLogger(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(New(&buf, true, &slog.HandlerOptions{Level: slog.LevelWarn}))
	log.Info("request", "method", "GET")
	if buf.Len() != 0 {
		t.Fatalf("an info line below the level was written: %s", buf.String())
	}
	log.With("front", "rest").Warn("slow", "ms", 7)
	if want := `"front":"rest","ms":7}`; !bytes.Contains(buf.Bytes(), []byte(want)) {
		t.Fatalf("%s lacks %s", buf.String(), want)
	}
}
