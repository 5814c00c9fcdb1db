// Package reqlog is the handler of a server's log that writes its request
// lines itself, byte for byte as slog's text or JSON handler would, and
// passes every other record to that handler.
//
// A server under load writes one line per request. slog's handlers take a
// general path for it (attributes, groups, replacement, quoting rules); the
// fast path appends the line's six fields to a pooled buffer. A request
// line is what the edge records for every request: message "request" at
// level INFO, and six attributes (method, path, status, workspace,
// latency, request_id). A line whose strings would need quoting or
// escaping, or that has other attributes, goes to slog's handler as it is.
//
// Plain is the fallback: slog's own handler, which writes the same bytes.
// BenchmarkRequestLine measures what the fast path saves.
//
//	log := slog.New(reqlog.New(os.Stderr, false, &slog.HandlerOptions{Level: slog.LevelInfo}))
package reqlog

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// requestLines writes the request lines itself and passes every other
// record to slog's handler.
type requestLines struct {
	slog.Handler
	w    io.Writer
	json bool
}

// New returns the handler of a server's log over w: slog's text handler
// (its JSON handler when json) with o, the request lines written by the
// fast path. Both write whole lines through one lock.
func New(w io.Writer, json bool, o *slog.HandlerOptions) slog.Handler {
	lw := &lockedWriter{w: w}
	return &requestLines{Handler: Plain(lw, json, o), w: lw, json: json}
}

// Plain returns slog's own handler over w, text or JSON, with o: the
// fallback, which writes the same lines as New, request lines included.
func Plain(w io.Writer, json bool, o *slog.HandlerOptions) slog.Handler {
	if json {
		return slog.NewJSONHandler(w, o)
	}
	return slog.NewTextHandler(w, o)
}

// lockedWriter serialises the writes of the handler and of the fast path.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// Handle writes a request line, or passes the record on.
func (h *requestLines) Handle(ctx context.Context, r slog.Record) error {
	if y := r.Time.Year(); r.Message != "request" || r.Level != slog.LevelInfo || r.NumAttrs() != 6 || r.Time.IsZero() || y >= 10000 || y < 0 {
		return h.Handler.Handle(ctx, r)
	}
	bp := lineBufs.Get().(*[]byte)
	defer lineBufs.Put(bp)
	b := (*bp)[:0]
	if h.json {
		b = append(b, `{"time":"`...)
		b = r.Time.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"INFO","msg":"request"`...)
	} else {
		b = append(b, "time="...)
		b = appendRFC3339Millis(b, r.Time)
		b = append(b, " level=INFO msg=request"...)
	}
	plain := true
	r.Attrs(func(a slog.Attr) bool {
		if !plainString(a.Key) {
			plain = false
			return false
		}
		if h.json {
			b = append(append(append(b, `,"`...), a.Key...), `":`...)
		} else {
			b = append(append(append(b, ' '), a.Key...), '=')
		}
		switch v := a.Value; v.Kind() {
		case slog.KindString:
			s := v.String()
			if !plainString(s) {
				plain = false
				return false
			}
			if h.json {
				b = append(append(append(b, '"'), s...), '"')
			} else {
				b = append(b, s...)
			}
		case slog.KindInt64:
			b = strconv.AppendInt(b, v.Int64(), 10)
		case slog.KindUint64:
			b = strconv.AppendUint(b, v.Uint64(), 10)
		case slog.KindDuration:
			if h.json {
				b = strconv.AppendInt(b, int64(v.Duration()), 10)
			} else {
				b = append(b, v.Duration().String()...)
			}
		default:
			plain = false
			return false
		}
		return true
	})
	if !plain {
		return h.Handler.Handle(ctx, r)
	}
	if h.json {
		b = append(b, '}')
	}
	b = append(b, '\n')
	*bp = b
	_, err := h.w.Write(b)
	return err
}

// WithAttrs and WithGroup leave the fast path: their lines carry more.
func (h *requestLines) WithAttrs(as []slog.Attr) slog.Handler { return h.Handler.WithAttrs(as) }
func (h *requestLines) WithGroup(name string) slog.Handler    { return h.Handler.WithGroup(name) }

// plainString reports whether s is written as it is by both handlers: not
// empty, and only printable ASCII other than space, '=', '"' and '\'.
func plainString(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '=' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendRFC3339Millis is the text handler's time: RFC 3339 with exactly
// three digits of milliseconds.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the fourth digit
}
