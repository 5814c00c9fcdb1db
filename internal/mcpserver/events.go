package mcpserver

import (
	"errors"
	"sync"
)

// eventStore keeps what the sessions' event streams sent, for a client
// that resumes a stream with Last-Event-ID: every stream's events in
// order, within a budget of bytes over all sessions. Past the budget the
// oldest event of each stream goes first; a stream resumed from before its
// first kept event is refused.
type eventStore struct {
	mu      sync.Mutex
	max     int
	size    int
	streams map[string]map[string]*events // session -> stream -> its events
}

type events struct {
	first int // the index of data[0]
	data  [][]byte
	size  int
}

func newEventStore(max int) *eventStore {
	return &eventStore{max: max, streams: map[string]map[string]*events{}}
}

// append keeps a stream's next event (nil: a priming event, which only
// takes an index).
func (st *eventStore) append(session, stream string, data []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	m := st.streams[session]
	if m == nil {
		m = map[string]*events{}
		st.streams[session] = m
	}
	e := m[stream]
	if e == nil {
		e = &events{}
		m[stream] = e
	}
	st.purge()
	e.data = append(e.data, data)
	e.size += len(data)
	st.size += len(data)
}

// purge removes the oldest event of each stream until the store is within
// its budget.
func (st *eventStore) purge() {
	for st.size > st.max {
		for _, m := range st.streams {
			for _, e := range m {
				if e.size > 0 {
					n := len(e.data[0])
					e.data, e.first, e.size = e.data[1:], e.first+1, e.size-n
					st.size -= n
				}
			}
		}
	}
}

var errPurged = errors.New("events purged")

// after is a stream's events after index.
func (st *eventStore) after(session, stream string, index int) ([][]byte, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	e := st.streams[session][stream]
	if e == nil {
		return nil, errPurged
	}
	start := index + 1 - e.first
	if start < 0 {
		return nil, errPurged
	}
	if start >= len(e.data) {
		return nil, nil
	}
	return append([][]byte(nil), e.data[start:]...), nil
}

// forget drops a session's events.
func (st *eventStore) forget(session string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, e := range st.streams[session] {
		st.size -= e.size
	}
	delete(st.streams, session)
}
