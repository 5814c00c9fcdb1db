package fault

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mediamock/mediamock/controlapi"
	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/internal/seed"
)

// Global is the scope of the rules every workspace meets.
const Global uint64 = 0

// MaxRules caps the rules of one scope.
const MaxRules = 256

// Rule is a fault kept in a scope, as the control API shows it.
type Rule = controlapi.FaultRule

// rule is a Rule with what its scope keeps of it besides.
type rule struct {
	Rule
	index uint64 // the rule's place in its scope: its draws depend on it alone
	reg   *registered
	kind  Kind // its parameters, decoded from its spec, and the kind's state
}

// Set holds the rules of every scope of one server.
type Set struct {
	seed   uint64
	count  atomic.Int64 // rules in every scope: the fast path when none
	mu     sync.Mutex
	next   uint64
	scopes map[uint64]*scope
	hits   map[string]uint64 // by kind, since the server started: never reset
}

type scope struct {
	rules []*rule
	added uint64
}

// NewSet returns the rules of a server whose draws follow seed.
func NewSet(seed uint64) *Set { return &Set{seed: seed} }

// Active reports whether any scope has a rule.
func (s *Set) Active() bool { return s != nil && s.count.Load() > 0 }

// Add keeps a validated spec as a rule of scope ws.
func (s *Set) Add(ws uint64, spec Spec) (Rule, error) { return s.AddVia(ws, spec, "") }

// AddVia keeps a validated spec as a rule of scope ws that the shorthand
// endpoint via made.
func (s *Set) AddVia(ws uint64, spec Spec, via string) (Rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.add(ws, spec, via)
}

// Replace keeps spec as the one rule of scope ws that the shorthand via
// made for what same recognizes (an operation's latency, a platform): an
// earlier one is removed first. A nil spec only removes it.
func (s *Set) Replace(ws uint64, via string, same func(Spec) bool, spec *Spec) (Rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc := s.scopes[ws]; sc != nil {
		sc.rules = slices.DeleteFunc(sc.rules, func(r *rule) bool {
			if r.Via == via && same(r.Spec) {
				s.count.Add(-1)
				return true
			}
			return false
		})
	}
	if spec == nil {
		return Rule{}, nil
	}
	return s.add(ws, *spec, via)
}

// Before moves rule id of scope ws before the first rule of the scope that
// first reports, if that comes before it: a shorthand whose specific rule
// must be tried before its general one (an operation's latency before
// every operation's).
func (s *Set) Before(ws uint64, id string, first func(Rule) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.scopes[ws]
	if sc == nil {
		return
	}
	at := slices.IndexFunc(sc.rules, func(r *rule) bool { return r.ID == id })
	to := slices.IndexFunc(sc.rules, func(r *rule) bool { return first(r.Rule) })
	if at < 0 || to < 0 || to >= at {
		return
	}
	r := sc.rules[at]
	sc.rules = slices.Insert(slices.Delete(sc.rules, at, at+1), to, r)
}

// add keeps a rule; the caller holds s.mu.
func (s *Set) add(ws uint64, spec Spec, via string) (Rule, error) {
	if s.scopes == nil {
		s.scopes = map[uint64]*scope{}
	}
	sc := s.scopes[ws]
	if sc == nil {
		sc = &scope{}
		s.scopes[ws] = sc
	}
	if len(sc.rules) >= MaxRules {
		return Rule{}, &problem.Error{Kind: problem.ECONFLICT, Code: "fault_limit_reached",
			Message: "This scope has " + strconv.Itoa(MaxRules) + " fault rules already; delete some first.",
			Details: map[string]any{"limit": MaxRules}}
	}
	reg := lookup(spec.Kind)
	if reg == nil {
		return Rule{}, problem.InvalidError([]problem.Violation{{In: "body", Field: "kind", Reason: fmt.Sprintf("unknown fault kind %q", spec.Kind), Allowed: anys(Kinds())}})
	}
	s.next++
	sc.added++
	r := &rule{Rule: Rule{ID: ruleID(s.next), Via: via, Spec: spec}, index: sc.added, reg: reg, kind: reg.decode(&spec)}
	sc.rules = append(sc.rules, r)
	s.count.Add(1)
	return r.Rule, nil
}

// Rules lists the rules of scope ws, oldest first.
func (s *Set) Rules(ws uint64) []Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Rule{}
	if sc := s.scopes[ws]; sc != nil {
		for _, r := range sc.rules {
			out = append(out, r.Rule)
		}
	}
	return out
}

// Delete removes rule id of scope ws; false when the scope has no such rule.
func (s *Set) Delete(ws uint64, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := s.scopes[ws]
	if sc == nil {
		return false
	}
	for i, r := range sc.rules {
		if r.ID == id {
			sc.rules = append(sc.rules[:i], sc.rules[i+1:]...)
			s.count.Add(-1)
			return true
		}
	}
	return false
}

// Clear removes the rules of scope ws.
func (s *Set) Clear(ws uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(ws)
}

func (s *Set) drop(ws uint64) {
	if sc := s.scopes[ws]; sc != nil {
		s.count.Add(-int64(len(sc.rules)))
		delete(s.scopes, ws)
	}
}

// ClearScoped removes the rules of every workspace, keeping the global ones.
func (s *Set) ClearScoped() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ws := range s.scopes {
		if ws != Global {
			s.drop(ws)
		}
	}
}

// ClearAll removes every rule.
func (s *Set) ClearAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scopes = nil
	s.count.Store(0)
}

// Pick decides whether a request of workspace ws (0: unknown) meets a
// fault at point p: the workspace's rules come first, then the global
// ones, each in the order they were added. A rule that matches counts the
// request; whether it strikes is drawn from the seed, the rule's place in
// its scope and how many requests it matched before. A rule with First
// is spent, and removed, once it struck that many.
func (s *Set) Pick(ws uint64, p Stage, req Request) *Hit {
	if !s.Active() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.tried(ws) {
		for i, r := range sc.rules {
			if !matches(r.reg, r.kind, &r.Spec, p, req) {
				continue
			}
			n, ok := s.strike(sc, i)
			if !ok {
				continue
			}
			if k, ok := r.kind.(striker); ok {
				k.Struck(req)
			}
			return &Hit{Spec: r.Spec, Rule: r.ID, rng: seed.For(s.seed, "fault/draw/"+strconv.FormatUint(r.index, 10), n), kind: r.kind, reg: r.reg}
		}
	}
	return nil
}

// strike counts a request that rule i of sc targets and draws whether it
// strikes: from the seed, the rule's place in its scope and how many
// requests it targeted before (n). A rule with First is spent, and
// removed, once it struck that many. The caller holds s.mu.
func (s *Set) strike(sc *scope, i int) (n uint64, ok bool) {
	r := sc.rules[i]
	n = uint64(r.Matched)
	r.Matched++
	if r.Probability != nil && seed.For(s.seed, "fault/strike/"+strconv.FormatUint(r.index, 10), n).Float64() >= *r.Probability {
		return n, false
	}
	s.hit(r)
	if r.First > 0 && r.Hits >= int64(r.First) {
		sc.rules = append(sc.rules[:i:i], sc.rules[i+1:]...)
		s.count.Add(-1)
	}
	return n, true
}

// Count counts a request that rule id, of scope ws or the global one,
// targeted, and struck when struck: for a kind decided outside Pick (the
// access stage's, found with Find). A rule gone since is not counted.
func (s *Set) Count(ws uint64, id string, struck bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.tried(ws) {
		for _, r := range sc.rules {
			if r.ID == id {
				r.Matched++
				if struck {
					s.hit(r)
				}
				return
			}
		}
	}
}

// Find returns the first rule of scope ws, or else the global scope, that
// targets req at stage p, without counting the request: the access
// stage's, which the links a response hands out must know of.
func (s *Set) Find(ws uint64, p Stage, req Request) *Hit {
	if !s.Active() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.tried(ws) {
		for _, r := range sc.rules {
			if matches(r.reg, r.kind, &r.Spec, p, req) {
				return &Hit{Spec: r.Spec, Rule: r.ID, kind: r.kind, reg: r.reg}
			}
		}
	}
	return nil
}

// tried are the scopes whose rules a request of workspace ws meets, in
// order: its own, then the global one. The caller holds s.mu.
func (s *Set) tried(ws uint64) []*scope {
	ids := []uint64{ws, Global}
	if ws == Global {
		ids = ids[:1]
	}
	out := make([]*scope, 0, 2)
	for _, id := range ids {
		if sc := s.scopes[id]; sc != nil {
			out = append(out, sc)
		}
	}
	return out
}

// HasStage reports whether any scope has a rule of a kind of stage p.
func (s *Set) HasStage(p Stage) bool {
	if !s.Active() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.scopes {
		for _, r := range sc.rules {
			if r.reg.about.Stage == p {
				return true
			}
		}
	}
	return false
}

// HasKind reports whether any scope has a rule of kind.
func (s *Set) HasKind(kind string) bool {
	if !s.Active() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.scopes {
		for _, r := range sc.rules {
			if r.Kind == kind {
				return true
			}
		}
	}
	return false
}

// hit counts a strike of rule r. The caller holds s.mu.
func (s *Set) hit(r *rule) {
	r.Hits++
	if s.hits == nil {
		s.hits = map[string]uint64{}
	}
	s.hits[r.Kind]++
}

// HitsByKind counts the strikes of the rules of every scope by kind, since
// the server started: clearing or deleting rules does not take them back.
func (s *Set) HitsByKind() map[string]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]uint64, len(s.hits))
	for k, n := range s.hits {
		out[k] = n
	}
	return out
}
