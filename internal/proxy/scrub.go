package proxy

import (
	"context"
	"log/slog"

	"github.com/mediamock/mediamock/internal/check"
)

// scrubHandler masks every token form in a log line's message and string
// values: a backstop for lines written without the exchange at hand.
type scrubHandler struct{ h slog.Handler }

func (s scrubHandler) Enabled(ctx context.Context, l slog.Level) bool { return s.h.Enabled(ctx, l) }

func (s scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, check.ScrubTokens(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(scrubAttr(a))
		return true
	})
	return s.h.Handle(ctx, out)
}

func (s scrubHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = scrubAttr(a)
	}
	return scrubHandler{s.h.WithAttrs(out)}
}

func (s scrubHandler) WithGroup(name string) slog.Handler { return scrubHandler{s.h.WithGroup(name)} }

func scrubAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, check.ScrubTokens(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, item := range g {
			out[i] = scrubAttr(item)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, check.ScrubTokens(err.Error()))
		}
	}
	return a
}
