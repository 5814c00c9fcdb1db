package oauth

import (
	"time"
)

// Tenants: who holds what the authorization server keeps, and the bounds
// of each, so that one tenant crowds out no one but itself.
//
// A grant's tenant is the sandbox its workspace belongs to (approved with
// the sandbox's control token, or the server's), else the server itself
// (its own workspaces: approved with its control token, on an open local
// server, or by --oauth-approve). What a tenant's grants hold is bounded per
// tenant: the clients approved in it, its codes, its lines of tokens; past a
// bound the tenant's own oldest goes. A client no tenant holds (not
// approved yet, or whose grants have all ended) is idle, and bounded by the
// address it registered from (registration.go). A deleted sandbox's tenant
// is forgotten at once (ForgetSandbox), with the clients it alone held.

// The bounds of a tenant.
const (
	// maxClientsPerTenant bounds the clients a tenant holds (each with a
	// code pending or a line of tokens alive in it): a client new to a
	// tenant that holds as many takes the place of the one approved there
	// longest ago, whose codes there are forgotten and lines ended.
	maxClientsPerTenant = 256
	// maxCodesPerTenant bounds a tenant's codes (pending, or used and kept
	// a while to catch a replay): past it, its oldest code is forgotten.
	maxCodesPerTenant = 1000
	// maxLinesPerTenant bounds a tenant's live lines of tokens (a code's
	// family): past it, its oldest line ends and its tokens are revoked.
	maxLinesPerTenant = 1000
)

// tenant is what one tenant holds.
type tenant struct {
	ws       uint64             // the sandbox's workspace; 0 for the server's own workspaces
	codes    map[string]*grant  // its codes
	families map[*family]uint64 // its live lines, by the order they began
	clients  map[string]*place  // the clients holding something live in it
	next     time.Time          // nothing of it expires before: purge passes it over till then
}

// place is a client's place in a tenant.
type place struct {
	live     int    // its codes pending and its lines alive there
	approved uint64 // the order of its latest approval there
}

// ForgetSandbox frees at once what the authorization server keeps for a
// deleted sandbox, by its workspace: its codes, its lines of tokens (the
// tokens went with the workspace) and the clients no other tenant holds.
// The control plane calls it when it deletes a sandbox; a sandbox that went
// another way (a reset or a restore of the whole state) is forgotten at
// the next request of /oauth/*.
func (s *Server) ForgetSandbox(workspace uint64) {
	if workspace == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.tenants[workspace]; t != nil {
		s.forgetTenant(t)
	}
}

// tenantOf is the tenant of a workspace: itself when it is a sandbox's,
// else 0, the server's.
func (s *Server) tenantOf(ws uint64) uint64 {
	if _, ok := s.env.Eng.SandboxOf(ws); ok {
		return ws
	}
	return 0
}

// tenant is the tenant ws, made when it holds nothing yet. Requires s.mu.
func (s *Server) tenant(ws uint64) *tenant {
	t := s.tenants[ws]
	if t == nil {
		t = &tenant{ws: ws, codes: map[string]*grant{}, families: map[*family]uint64{}, clients: map[string]*place{}}
		s.tenants[ws] = t
	}
	return t
}

// due notes that something of t expires at x.
func (t *tenant) due(x time.Time) {
	if t.next.IsZero() || x.Before(t.next) {
		t.next = x
	}
}

// hold counts one more live thing of a client in t: a client no tenant
// held until then is no longer idle. Requires s.mu.
func (s *Server) hold(t *tenant, id string) *place {
	p := t.clients[id]
	if p == nil {
		p = &place{}
		t.clients[id] = p
		if c := s.clients[id]; c != nil {
			c.approved = true
			if c.tenants++; c.tenants == 1 {
				s.unidle(c)
			}
		}
	}
	p.live++
	return p
}

// unhold counts one live thing of a client in t less: a client no tenant
// holds any more is idle again. Requires s.mu.
func (s *Server) unhold(t *tenant, id string) {
	p := t.clients[id]
	if p == nil {
		return
	}
	if p.live--; p.live > 0 {
		return
	}
	delete(t.clients, id)
	if c := s.clients[id]; c != nil {
		if c.tenants--; c.tenants == 0 {
			s.idleAdd(c)
		}
	}
}

// approve keeps an authorization code's grant, for client c, in the
// tenant of its workspace, within the tenant's bounds. It returns the
// access tokens to revoke (of a line ended to make room). Requires s.mu.
func (s *Server) approve(c *client, code string, g *grant) []string {
	t := s.tenant(s.tenantOf(g.workspace))
	var ended []string
	if len(t.codes) >= maxCodesPerTenant {
		s.forgetCode(t.oldestCode())
	}
	if t.clients[c.ID] == nil && len(t.clients) >= maxClientsPerTenant {
		ended = s.release(t, t.longestApproved())
	}
	if s.clients[c.ID] == nil {
		// Pushed out of the idle clients since the request began: approved
		// now, it is kept.
		s.clients[c.ID] = c
	}
	s.seq++
	g.t, g.seq, g.live = t, s.seq, true
	t.codes[code] = g
	s.codes[code] = g
	s.hold(t, c.ID).approved = s.seq
	t.due(g.expires)
	return ended
}

// begin starts a line of tokens in its tenant, within the tenant's bound.
// It returns the access tokens to revoke (of the line ended to make room).
// Requires s.mu.
func (s *Server) begin(f *family) []string {
	t := f.t
	var ended []string
	if len(t.families) >= maxLinesPerTenant {
		ended = s.drop(t.oldestFamily())
	}
	s.seq++
	t.families[f] = s.seq
	s.hold(t, f.clientID)
	t.due(f.ends)
	return ended
}

// settle marks a code as no longer pending (used or expired): its client
// holds one live thing less. Requires s.mu.
func (s *Server) settle(g *grant) {
	if g.live {
		g.live = false
		s.unhold(g.t, g.clientID)
	}
}

// forgetCode forgets a code of a tenant. Requires s.mu.
func (s *Server) forgetCode(code string, g *grant) {
	if g == nil {
		return
	}
	s.settle(g)
	delete(g.t.codes, code)
	if s.codes[code] == g {
		delete(s.codes, code)
	}
}

// release ends what a client holds in t: its codes there are forgotten and
// its lines there end. It returns the access tokens to revoke. Requires s.mu.
func (s *Server) release(t *tenant, id string) []string {
	for k, g := range t.codes {
		if g.clientID == id {
			s.forgetCode(k, g)
		}
	}
	var ended []string
	for f := range t.families {
		if f.clientID == id {
			ended = append(ended, s.drop(f)...)
		}
	}
	return ended
}

// oldestCode is t's code issued first.
func (t *tenant) oldestCode() (string, *grant) {
	var key string
	var out *grant
	for k, g := range t.codes {
		if out == nil || g.seq < out.seq {
			key, out = k, g
		}
	}
	return key, out
}

// oldestFamily is t's line that began first.
func (t *tenant) oldestFamily() *family {
	var out *family
	first := uint64(0)
	for f, n := range t.families {
		if out == nil || n < first {
			out, first = f, n
		}
	}
	return out
}

// longestApproved is the client of t approved there longest ago.
func (t *tenant) longestApproved() string {
	var id string
	var first uint64
	for k, p := range t.clients {
		if id == "" || p.approved < first {
			id, first = k, p.approved
		}
	}
	return id
}

// sweep forgets what of t can serve no more at now: a pending code past
// its life no longer holds its client; a code is forgotten a code's life
// after that (a used one is kept that long to catch its replay); a line
// past its end ends (its access tokens have expired: the simulation purges
// them). A tenant left with nothing is forgotten. Requires s.mu.
func (s *Server) sweep(t *tenant, now time.Time) {
	var next time.Time
	soonest := func(x time.Time) {
		if next.IsZero() || x.Before(next) {
			next = x
		}
	}
	for k, g := range t.codes {
		if g.live && !now.Before(g.expires) {
			s.settle(g)
		}
		gone := g.expires.Add(CodeLifetime)
		switch {
		case !now.Before(gone):
			s.forgetCode(k, g)
		case g.live:
			soonest(g.expires)
		default:
			soonest(gone)
		}
	}
	for f := range t.families {
		if now.Before(f.ends) {
			soonest(f.ends)
		} else {
			s.drop(f)
		}
	}
	t.next = next
	if len(t.codes) == 0 && len(t.families) == 0 {
		delete(s.tenants, t.ws)
	}
}

// forgetTenant forgets all a tenant holds, and the clients it alone held;
// its tokens are not revoked (they went with its workspace). Requires s.mu.
func (s *Server) forgetTenant(t *tenant) {
	held := make([]*client, 0, len(t.clients))
	for id := range t.clients {
		if c := s.clients[id]; c != nil {
			c.tenants++ // kept from going idle, and crowding out idle ones, while its grants go
			held = append(held, c)
		}
	}
	for k, g := range t.codes {
		s.forgetCode(k, g)
	}
	for f := range t.families {
		s.drop(f)
	}
	for _, c := range held {
		if c.tenants--; c.tenants == 0 {
			s.forgetClient(c)
		}
	}
	delete(s.tenants, t.ws)
}
