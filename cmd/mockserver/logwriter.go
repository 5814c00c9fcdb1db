package main

import (
	"bufio"
	"io"
	"os"
	"sync"
	"time"
)

// logDelay is the longest a log line waits in the buffer.
const logDelay = 50 * time.Millisecond

// logWriter gathers log lines bound for a file (the process's stderr) and
// writes them at most logDelay later, so that a server under load makes one
// write for many request lines instead of one each. An idle server has no
// timer running.
type logWriter struct {
	mu    sync.Mutex
	w     *bufio.Writer
	armed bool
}

// bufferLog returns w buffered when it is a file; any other writer (a test's
// buffer) is written to at once.
func bufferLog(w io.Writer) (io.Writer, func()) {
	f, ok := w.(*os.File)
	if !ok {
		return w, func() {}
	}
	lw := &logWriter{w: bufio.NewWriterSize(f, 32<<10)}
	return lw, lw.Flush
}

// Write keeps p whole: a line larger than the buffer goes through at once.
func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(p) > l.w.Available() {
		if err := l.w.Flush(); err != nil {
			return 0, err
		}
	}
	n, err := l.w.Write(p)
	if !l.armed && l.w.Buffered() > 0 {
		l.armed = true
		time.AfterFunc(logDelay, l.Flush)
	}
	return n, err
}

// Flush writes what is buffered.
func (l *logWriter) Flush() {
	l.mu.Lock()
	l.w.Flush()
	l.armed = false
	l.mu.Unlock()
}
