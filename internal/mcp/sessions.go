package mcp

import (
	"fmt"
	"sync"
	"time"

	"github.com/mediamock/mediamock/sim"
)

// Sessions of the handshake-era revisions hold memory on the server (about
// 5 KB each) until they end, and opening one does not count against the
// rate limit: they are bounded in number, per workspace and in all, and
// end after sessionIdle without a request. Past its own cap a workspace's
// initialize is refused with a JSON-RPC error that says what to do. The
// server's cap refuses no workspace under its own cap: the least recently
// used session of the workspace holding the most sessions ends instead
// (evict), so that no set of workspaces can lock another out.
const (
	maxSessions          = 4096
	maxWorkspaceSessions = 256
	sessionIdle          = 10 * time.Minute
)

// sessionBook knows which workspace opened each session: the caps count
// by it, and a resource read answered outside the SDK checks it.
type sessionBook struct {
	mu      sync.Mutex
	owner   map[string]uint64    // session id -> workspace
	used    map[string]time.Time // session id -> its last request (wall clock)
	pending map[uint64]int       // initializations under way, per workspace
}

// sessionCaps are the server's cap and a workspace's.
func (f *Front) sessionCaps() (server, workspace int) {
	server, workspace = maxSessions, maxWorkspaceSessions
	if f.env.MaxMCPSessions > 0 {
		server = f.env.MaxMCPSessions
	}
	if f.env.MaxMCPWorkspaceSessions > 0 {
		workspace = f.env.MaxMCPWorkspaceSessions
	}
	return server, min(workspace, server)
}

// admit reserves a session for workspace ws, or refuses past its cap; done
// ends the reservation with the id the server gave the session ("" if it
// opened none).
func (f *Front) admitSession(ws uint64) (done func(id string), err error) {
	f.endIdle(f.env.WallClock()) // before counting: idle sessions give their places up
	live := map[string]bool{}
	for ss := range f.server.Sessions() {
		live[ss.ID()] = true
	}
	done, evict, err := f.reserveSession(ws, live)
	if evict != "" {
		f.endSession(evict) // its place is given already
	}
	return done, err
}

// reserveSession counts the live sessions and reserves one for ws, naming
// the session that gives its place up, if one must.
func (f *Front) reserveSession(ws uint64, live map[string]bool) (done func(id string), evict string, err error) {
	capServer, capWorkspace := f.sessionCaps()
	b := &f.book
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.owner == nil {
		b.owner, b.used, b.pending = map[string]uint64{}, map[string]time.Time{}, map[uint64]int{}
	}
	total, held := 0, map[uint64]int{}
	for id, owner := range b.owner {
		if !live[id] {
			delete(b.owner, id)
			delete(b.used, id)
			continue
		}
		total++
		held[owner]++
	}
	for _, n := range b.pending {
		total += n
	}
	mine := held[ws] + b.pending[ws]
	if mine < capWorkspace && total >= capServer {
		evict = b.victim(held, mine)
	}
	if mine >= capWorkspace || (total >= capServer && evict == "") {
		scope, limit, who := "workspace", capWorkspace, "This workspace"
		if mine < capWorkspace {
			scope, limit, who = "server", capServer, "The server"
		}
		return nil, "", &sim.Error{Kind: sim.ECONFLICT, Code: "too_many_sessions",
			Message: fmt.Sprintf("%s has %d open MCP sessions, the most it may have. End the sessions you no longer use (DELETE /mcp with their Mcp-Session-Id); a session also ends after %s without a request.",
				who, limit, sessionIdle),
			Details: map[string]any{"limit": limit, "scope": scope, "idle_timeout_seconds": int(sessionIdle / time.Second)}}
	}
	if evict != "" {
		delete(b.owner, evict)
		delete(b.used, evict)
	}
	b.pending[ws]++
	return func(id string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.pending[ws]--; b.pending[ws] == 0 {
			delete(b.pending, ws)
		}
		if id != "" {
			b.owner[id] = ws
			b.used[id] = f.env.WallClock()
		}
	}, evict, nil
}

// victim is the session that gives its place up when the server's cap is
// reached and a workspace holding mine sessions asks for one: the least
// recently used of the workspace holding the most (the lower workspace id
// of those holding as many), if it holds more than mine; "" otherwise (the
// asker has as much as any: the server's cap refuses it). Called with b.mu.
func (b *sessionBook) victim(held map[uint64]int, mine int) string {
	var most uint64
	n := 0
	for ws, k := range held {
		if k > n || (k == n && ws < most) {
			most, n = ws, k
		}
	}
	if n <= mine {
		return ""
	}
	var id string
	var last time.Time
	for sid, owner := range b.owner {
		if owner != most {
			continue
		}
		if u := b.used[sid]; id == "" || u.Before(last) || (u.Equal(last) && sid < id) {
			id, last = sid, u
		}
	}
	return id
}

// OpenSessions counts the sessions open.
func (f *Front) OpenSessions() int {
	n := 0
	for range f.server.Sessions() {
		n++
	}
	return n
}

// endSession ends session id if it is open.
func (f *Front) endSession(id string) {
	for ss := range f.server.Sessions() {
		if ss.ID() == id {
			if err := ss.Close(); err != nil {
				f.env.Log.Debug("end MCP session", "session", id, "err", err)
			}
			return
		}
	}
}

// owns reports whether session id is open and was opened by workspace ws.
func (f *Front) owns(id string, ws uint64) bool {
	f.book.mu.Lock()
	owner, ok := f.book.owner[id]
	f.book.mu.Unlock()
	if !ok || owner != ws {
		return false
	}
	for ss := range f.server.Sessions() {
		if ss.ID() == id {
			return true
		}
	}
	return false
}

// othersSession reports whether session id is open for a workspace other
// than ws: a request on it is refused (403), and meets no fault first.
func (f *Front) othersSession(id string, ws uint64) bool {
	f.book.mu.Lock()
	defer f.book.mu.Unlock()
	owner, ok := f.book.owner[id]
	return ok && owner != ws
}

// touch notes a request of a session, for its idle time.
func (f *Front) touch(id string) {
	now := f.env.WallClock()
	f.book.mu.Lock()
	if _, ok := f.book.owner[id]; ok {
		f.book.used[id] = now
	}
	f.book.mu.Unlock()
}

// sweep ends the sessions idle for sessionIdle, once a minute, until the
// server stops: the front keeps the sessions' idle times itself, since it
// answers some of their requests without the SDK.
func (f *Front) sweep() {
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-f.env.Stop.Done():
			return
		case <-tick.C:
			f.endIdle(f.env.WallClock())
		}
	}
}

// endIdle ends the sessions whose last request is sessionIdle old at now.
func (f *Front) endIdle(now time.Time) int {
	f.book.mu.Lock()
	idle := map[string]bool{}
	for id, used := range f.book.used {
		if now.Sub(used) >= sessionIdle {
			idle[id] = true
		}
	}
	f.book.mu.Unlock()
	n := 0
	for ss := range f.server.Sessions() {
		if idle[ss.ID()] {
			if err := ss.Close(); err != nil {
				f.env.Log.Debug("end idle MCP session", "session", ss.ID(), "err", err)
			}
			n++
		}
	}
	f.book.mu.Lock()
	for id := range idle {
		delete(f.book.used, id)
		delete(f.book.owner, id)
	}
	f.book.mu.Unlock()
	return n
}
