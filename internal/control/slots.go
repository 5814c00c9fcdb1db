package control

import (
	"context"
	"net"
	"strconv"
	"sync"

	"github.com/mediamock/mediamock/sim"
)

// Event streams are shared fairly between clients, known by their
// address: one client may hold MaxStreamsPerClient, and its next stream
// closes its own oldest (a page that reconnects, or a script that forgot
// to close, never locks its own address out); when all MaxStreams are
// taken, a client holding fewer than the biggest holder closes that
// holder's oldest stream. So no client, local or not, can hold every
// slot against the others. Every local client shares one address.

// MaxStreamsPerClient bounds the event streams of one client address.
const MaxStreamsPerClient = 8

// streamSlots are the event streams open, oldest first.
type streamSlots struct {
	mu   sync.Mutex
	open []*slot
}

// slot is one open stream.
type slot struct {
	client  string
	cancel  context.CancelFunc
	evicted bool // closed to make room; read under streamSlots.mu
}

// clientOf is the client part of a remote address: its IP.
func clientOf(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}

// take opens a slot for client, closing another stream if the sharing
// says so, or refuses with too_many_streams.
func (s *streamSlots) take(client string, cancel context.CancelFunc) (*slot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	count := map[string]int{}
	for _, o := range s.open {
		count[o.client]++
	}
	victim := ""
	switch {
	case count[client] >= MaxStreamsPerClient:
		victim = client
	case len(s.open) >= MaxStreams:
		// The biggest holder; of equals, the one whose oldest stream is oldest.
		for _, o := range s.open {
			if victim == "" || count[o.client] > count[victim] {
				victim = o.client
			}
		}
		if count[victim] <= count[client] {
			return nil, &sim.Error{Kind: sim.EUNAVAILABLE, Code: "too_many_streams",
				Message: "Too many event streams are open (" + strconv.Itoa(MaxStreams) + "); close one and try again."}
		}
	}
	if victim != "" {
		for i, o := range s.open {
			if o.client == victim {
				o.evicted = true
				o.cancel()
				s.open = append(s.open[:i], s.open[i+1:]...)
				break
			}
		}
	}
	sl := &slot{client: client, cancel: cancel}
	s.open = append(s.open, sl)
	return sl, nil
}

// release gives a slot back.
func (s *streamSlots) release(sl *slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, o := range s.open {
		if o == sl {
			s.open = append(s.open[:i], s.open[i+1:]...)
			break
		}
	}
}

// wasEvicted says whether the stream was closed to make room for another.
func (s *streamSlots) wasEvicted(sl *slot) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sl.evicted
}
