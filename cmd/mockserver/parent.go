package main

import (
	"context"
	"io"
	"log/slog"
)

// withParent is ctx, ended too when standard input ends: the process that
// started the server holds the pipe's other end, and the system closes it
// when that process dies, however it dies (SIGKILL included), on every
// OS. The npm and pip helpers start the server so; a test runner killed
// with SIGKILL then leaves no server behind.
//
// The server does not ask Linux for a parent-death signal itself: that
// signal follows the thread that started the child, not the process, and
// a helper that starts servers from a worker thread would see them killed
// when the thread ends (the pip helper asks for it where it is safe, from
// the main thread).
func withParent(ctx context.Context, stdin io.Reader, log *slog.Logger) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if stdin != nil {
		go func() {
			_, err := io.Copy(io.Discard, stdin)
			log.Info("standard input ended: the parent is gone (--exit-with-parent)", "err", err)
			cancel()
		}()
	}
	return ctx, cancel
}
