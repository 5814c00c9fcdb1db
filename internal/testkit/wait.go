package testkit

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Bound caps every wait of a test: a safety net that fails a test that
// hangs, never a delay. A wait that succeeds ends as soon as what it waits
// for happens.
const Bound = 30 * time.Second

// Receive returns the next value of ch, failing the test if none comes
// within Bound. what names the value, for the failure.
func Receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(Bound)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: nothing within %v", what, Bound)
		var zero T
		return zero
	}
}

// Signal tells waiters that something changed: the producer of a condition
// calls Notify after each change, Await checks the condition again at each.
// The zero value is ready to use.
type Signal struct {
	mu sync.Mutex
	ch chan struct{}
}

// Notify wakes everyone waiting on Changed.
func (s *Signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// Changed returns a channel closed at the next Notify.
func (s *Signal) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// Await waits until cond holds: it checks cond at once and again after
// each Notify of s, and fails the test if cond does not hold within Bound.
// No change is missed: the channel is taken before cond is checked. what
// says what is awaited, for the failure.
func Await(t testing.TB, s *Signal, what string, cond func() bool) {
	t.Helper()
	timer := time.NewTimer(Bound)
	defer timer.Stop()
	for {
		changed := s.Changed()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("%s: not within %v", what, Bound)
		}
	}
}

// Poll waits until cond holds, checking it at once and then every
// millisecond, and fails the test if cond does not hold within Bound. It is
// for a condition nothing signals: prefer Receive, or Await on a Signal,
// when something can. A millisecond's tick neither spins a core nor delays
// the test noticeably.
func Poll(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if cond() {
		return
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	timer := time.NewTimer(Bound)
	defer timer.Stop()
	for {
		select {
		case <-tick.C:
			if cond() {
				return
			}
		case <-timer.C:
			t.Fatalf("%s: not within %v", what, Bound)
		}
	}
}

// Watch opens the server's event stream (GET /_mock/events, which needs no
// control token here) and returns a Signal notified at every event: a job,
// a publication or the ledger changing, the clock moving, the journal
// recording a request. It is what to Await a condition on the server's
// state with (the journal, coverage: an operation is counted before its
// request is recorded). The stream is subscribed when Watch returns, so a
// change after that is notified. It closes when the test ends.
func Watch(t testing.TB, srv Server) *Signal {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+"/_mock/events", nil)
	require.NoError(t, err)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET /_mock/events")
	// The server subscribes before it sends the ready event: read up to it,
	// within Bound.
	late := time.AfterFunc(Bound, cancel)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	ready := false
	for !ready && sc.Scan() {
		ready = sc.Text() == "event: ready"
	}
	if !late.Stop() || !ready {
		t.Fatalf("the event stream sent no ready event within %v (%v)", Bound, sc.Err())
	}
	s := &Signal{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				s.Notify()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return s
}
