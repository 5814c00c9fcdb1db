package mcpserver

import (
	"context"
	"sync"
	"time"
)

// A session of the handshake-era revisions: opened by initialize, named
// by its Mcp-Session-Id, bound to the owner that opened it (another
// owner's requests on it are refused), ended by DELETE, by its idle time,
// or to make room (Limits).
type session struct {
	id, owner string
	peer      peer
	closed    chan struct{}
	closeOnce sync.Once

	mu         sync.Mutex
	used       time.Time          // its last request, on the wall clock
	streams    map[string]*stream // its event streams still answering
	standalone bool               // its GET stream is open
}

// close ends the session: its requests under way are cancelled, its
// streams end.
func (ss *session) close() {
	ss.closeOnce.Do(func() {
		close(ss.closed)
		ss.peer.cancelAll()
	})
}

// sessionStore holds the open sessions. Its caps are exact under any
// concurrency: an initialize reserves its place under the store's lock
// before its session exists.
type sessionStore struct {
	limits Limits
	now    func() time.Time

	mu       sync.Mutex
	byID     map[string]*session
	reserved map[string]int // places reserved by initializations under way, per owner
	onClose  func(id string)
}

func newSessionStore(l Limits, now func() time.Time) *sessionStore {
	return &sessionStore{limits: l, now: now, byID: map[string]*session{}, reserved: map[string]int{}}
}

// caps are the store's cap and an owner's (0: none).
func (st *sessionStore) caps() (server, owner int) {
	server, owner = st.limits.Sessions, st.limits.PerOwner
	if owner <= 0 || (server > 0 && owner > server) {
		owner = server
	}
	return server, owner
}

// reserve takes a place for a session of owner, or refuses it past a cap.
// When the server is full and owner holds fewer sessions than the owner
// holding the most, that owner's least recently used session ends to make
// room (returned, for the caller to close). done books the session opened
// in the place (nil when none was: its place is given back).
func (st *sessionStore) reserve(owner string) (done func(*session), evicted *session, refused *Error) {
	st.endIdle() // idle sessions give their places up first
	capServer, capOwner := st.caps()
	st.mu.Lock()
	defer st.mu.Unlock()
	total, held := 0, map[string]int{}
	for _, ss := range st.byID {
		total++
		held[ss.owner]++
	}
	for o, n := range st.reserved {
		total += n
		held[o] += n
	}
	mine := held[owner]
	if capOwner > 0 && mine >= capOwner {
		return nil, nil, st.refuse("owner", capOwner)
	}
	if capServer > 0 && total >= capServer {
		if evicted = st.victim(held, mine); evicted == nil {
			return nil, nil, st.refuse("server", capServer)
		}
		delete(st.byID, evicted.id)
	}
	st.reserved[owner]++
	return func(ss *session) {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.reserved[owner]--; st.reserved[owner] == 0 {
			delete(st.reserved, owner)
		}
		if ss != nil {
			st.byID[ss.id] = ss
		}
	}, evicted, nil
}

func (st *sessionStore) refuse(scope string, limit int) *Error {
	if st.limits.Refuse != nil {
		return st.limits.Refuse(scope, limit)
	}
	return &Error{Code: CodeInternalError, Message: "too many sessions"}
}

// victim is the session that gives its place up when the server is full
// and an owner holding mine sessions asks for one: the least recently used
// of the owner holding the most (the lower owner of those holding as
// many), if it holds more than mine. Called with st.mu.
func (st *sessionStore) victim(held map[string]int, mine int) *session {
	var most string
	n := 0
	for o, k := range held {
		if k > n || (k == n && o < most) {
			most, n = o, k
		}
	}
	if n <= mine {
		return nil
	}
	var v *session
	var last time.Time
	for _, ss := range st.byID {
		if ss.owner != most {
			continue
		}
		ss.mu.Lock()
		u := ss.used
		ss.mu.Unlock()
		if v == nil || u.Before(last) || (u.Equal(last) && ss.id < v.id) {
			v, last = ss, u
		}
	}
	return v
}

// get is the session of id, nil if none is open; it counts as used.
func (st *sessionStore) get(id string) *session {
	st.mu.Lock()
	ss := st.byID[id]
	st.mu.Unlock()
	if ss != nil {
		ss.mu.Lock()
		ss.used = st.now()
		ss.mu.Unlock()
	}
	return ss
}

// owner is the owner of session id.
func (st *sessionStore) owner(id string) (string, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	ss, ok := st.byID[id]
	if !ok {
		return "", false
	}
	return ss.owner, true
}

// end ends session id, if it is open.
func (st *sessionStore) end(id string) bool {
	st.mu.Lock()
	ss := st.byID[id]
	delete(st.byID, id)
	st.mu.Unlock()
	if ss == nil {
		return false
	}
	st.closed(ss)
	return true
}

func (st *sessionStore) closed(ss *session) {
	ss.close()
	if st.onClose != nil {
		st.onClose(ss.id)
	}
}

// endAll ends every session.
func (st *sessionStore) endAll() {
	st.mu.Lock()
	all := st.byID
	st.byID = map[string]*session{}
	st.mu.Unlock()
	for _, ss := range all {
		st.closed(ss)
	}
}

// count counts the open sessions.
func (st *sessionStore) count() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.byID)
}

// endIdle ends the sessions whose last request is Limits.Idle old.
func (st *sessionStore) endIdle() int {
	if st.limits.Idle <= 0 {
		return 0
	}
	now := st.now()
	var idle []*session
	st.mu.Lock()
	for id, ss := range st.byID {
		ss.mu.Lock()
		if now.Sub(ss.used) >= st.limits.Idle {
			idle = append(idle, ss)
			delete(st.byID, id)
		}
		ss.mu.Unlock()
	}
	st.mu.Unlock()
	for _, ss := range idle {
		st.closed(ss)
	}
	return len(idle)
}

// Sessions counts the open sessions.
func (s *Server) Sessions() int { return s.sessions.count() }

// EndSession ends session id, if it is open: its next request is answered
// 404, as for any session the server does not know.
func (s *Server) EndSession(id string) { s.sessions.end(id) }

// EndSessions ends every session (the server stops): their hanging
// requests answer.
func (s *Server) EndSessions() { s.sessions.endAll() }

// EndIdle ends the sessions idle for Limits.Idle, and counts them.
func (s *Server) EndIdle() int { return s.sessions.endIdle() }

// SessionOwner is the owner of an open session.
func (s *Server) SessionOwner(id string) (owner string, ok bool) { return s.sessions.owner(id) }

// owner is who sends the requests of ctx (Options.Owner): a session
// opened by one owner answers no other (403).
func (s *Server) owner(ctx context.Context) string {
	if s.opts.Owner == nil {
		return ""
	}
	return s.opts.Owner(ctx)
}
