package tblog

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

// lines records what the handler writes.
type lines []string

func (l *lines) Logf(format string, args ...any) { *l = append(*l, fmt.Sprintf(format, args...)) }

func TestHandlerWritesOneLinePerRecordAtOrAboveItsLevel(t *testing.T) {
	tests := []struct {
		name string
		log  func(*slog.Logger)
		want []string
	}{
		{"below the level: nothing", func(l *slog.Logger) { l.Info("started", "addr", "x") }, nil},
		{"at the level", func(l *slog.Logger) { l.Warn("slow", "ms", 12) }, []string{"mediamock: WARN slow ms=12"}},
		{"above it, with attributes in order", func(l *slog.Logger) { l.Error("boom", "err", "disk full", "n", 2) },
			[]string{"mediamock: ERROR boom err=disk full n=2"}},
		{"With's attributes first", func(l *slog.Logger) { l.With("front", "rest").Warn("late", "op", "getAccount") },
			[]string{"mediamock: WARN late front=rest op=getAccount"}},
		{"groups are flat", func(l *slog.Logger) { l.WithGroup("g").Warn("x", "k", "v") }, []string{"mediamock: WARN x k=v"}},
		{"a line each", func(l *slog.Logger) { l.Warn("a"); l.Warn("b") }, []string{"mediamock: WARN a", "mediamock: WARN b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got lines
			tt.log(slog.New(New(&got, slog.LevelWarn)))
			assert.Equal(t, tt.want, []string(got))
		})
	}
}

func TestWithAttrsLeavesTheParentAlone(t *testing.T) {
	var got lines
	parent := slog.New(New(&got, slog.LevelInfo))
	parent.With("a", 1).Info("child")
	parent.Info("parent")
	assert.Equal(t, []string{"mediamock: INFO child a=1", "mediamock: INFO parent"}, []string(got))
}
