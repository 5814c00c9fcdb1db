// Package fanout hands values to subscribers without ever blocking the
// publisher. Each subscriber has a bounded buffer; a value that does not
// fit is dropped and counted, and the subscriber learns how many it lost
// from a marker that takes their place as soon as there is room again.
//
//	var h fanout.Hub[string]
//	ch, cancel := h.Subscribe(64, func(n uint64) string { return fmt.Sprint("lost ", n) })
//	defer cancel()
//	h.Publish("hello")
package fanout

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Hub fans values out to its subscribers. Its zero value has none.
type Hub[T any] struct {
	mu   sync.Mutex
	subs []*sub[T]
	n    atomic.Int32
}

type sub[T any] struct {
	ch      chan T
	marker  func(dropped uint64) T
	dropped uint64
}

// Active reports whether anyone listens: a publisher skips the work of
// making values when no one does.
func (h *Hub[T]) Active() bool { return h.n.Load() > 0 }

// Subscribe returns a channel that receives what is published from now on,
// buffered to size values, and a function that ends the subscription and
// closes the channel. When values had to be dropped, marker(n) is sent in
// their place before the next value that fits.
func (h *Hub[T]) Subscribe(size int, marker func(dropped uint64) T) (<-chan T, func()) {
	s := &sub[T]{ch: make(chan T, max(size, 1)), marker: marker}
	h.mu.Lock()
	h.subs = append(h.subs, s)
	h.n.Store(int32(len(h.subs)))
	h.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.subs = slices.DeleteFunc(h.subs, func(x *sub[T]) bool { return x == s })
			h.n.Store(int32(len(h.subs)))
			close(s.ch)
		})
	}
}

// Publish hands values to every subscriber, in order, without blocking.
func (h *Hub[T]) Publish(values ...T) {
	if len(values) == 0 || !h.Active() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.subs {
		for _, v := range values {
			s.send(v)
		}
	}
}

func (s *sub[T]) send(v T) {
	if s.dropped > 0 && s.marker != nil {
		select {
		case s.ch <- s.marker(s.dropped):
			s.dropped = 0
		default:
			s.dropped++
			return
		}
	}
	select {
	case s.ch <- v:
	default:
		s.dropped++
	}
}
