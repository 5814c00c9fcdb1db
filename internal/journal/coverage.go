package journal

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mediamock/mediamock/controlapi"
)

// Counts counts answers per operation and status, and calls per operation
// and front: for the whole server and for each workspace.
type Counts struct {
	mu   sync.Mutex
	all  tally
	byWS map[uint64]*tally
	// pending is each workspace's last exchange that met a fault; waiting
	// counts them, for the fast path of requests when none waits.
	pending map[uint64]Exchange
	waiting atomic.Int64
	// FaultKinds are the kinds of fault the failure paths list.
	FaultKinds []string
}

// tally is one scope's counts.
type tally struct {
	counts map[string]map[int]int
	fronts map[string]map[string]int
	faults map[string]*FailurePath
}

func (t *tally) hit(front, op string, status int) {
	if t.counts == nil {
		t.counts, t.fronts = map[string]map[int]int{}, map[string]map[string]int{}
	}
	if t.counts[op] == nil {
		t.counts[op], t.fronts[op] = map[int]int{}, map[string]int{}
	}
	t.counts[op][status]++
	t.fronts[op][front]++
}

// Hit counts one answer of an operation called by workspace ws (0 when
// none was identified) through a front (rest, mcp); status is what the
// operation answered.
func (c *Counts) Hit(ws uint64, front, op string, status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all.hit(front, op, status)
	if ws != 0 {
		if c.byWS == nil {
			c.byWS = map[uint64]*tally{}
		}
		t := c.byWS[ws]
		if t == nil {
			t = &tally{}
			c.byWS[ws] = t
		}
		t.hit(front, op, status)
	}
}

// Reset starts counting again: everything when ws is 0, else the counts of
// one workspace.
func (c *Counts) Reset(ws uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ws == 0 {
		c.all, c.byWS, c.pending = tally{}, nil, nil
		c.waiting.Store(0)
		return
	}
	delete(c.byWS, ws)
	delete(c.pending, ws)
	c.waiting.Store(int64(len(c.pending)))
}

// The coverage report's types are the control API's own.
type (
	// Coverage reports what the clients exercised.
	Coverage = controlapi.Coverage
	// OperationCoverage is one operation's answers.
	OperationCoverage = controlapi.OperationCoverage
	// StatusCoverage is how often an operation answered a status.
	StatusCoverage = controlapi.StatusCoverage
	// CoverageSummary totals a coverage report.
	CoverageSummary = controlapi.CoverageSummary
	// FailurePath is how often the clients met a kind of fault, and what
	// they did next.
	FailurePath = controlapi.FailurePath
)

// Operation is an operation of the contract a coverage report lists.
type Operation struct {
	ID, Method, Path string
	Declared         []int
}

// ResetScoped forgets the counts of every workspace, keeping the server's.
func (c *Counts) ResetScoped() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byWS, c.pending = nil, nil
	c.waiting.Store(0)
}

// Report builds the coverage report of ops, in their order, with the
// engine's lifecycle counts: of the whole server when ws is 0, else of one
// workspace.
func (c *Counts) Report(ws uint64, ops []Operation, lifecycle map[string]int) Coverage {
	c.mu.Lock()
	t := &c.all
	if ws != 0 {
		t = c.byWS[ws]
		if t == nil {
			t = &tally{}
		}
	}
	counts, fronts := map[string]map[int]int{}, map[string]map[string]int{}
	for op, m := range t.counts {
		counts[op], fronts[op] = maps.Clone(m), maps.Clone(t.fronts[op])
	}
	failures := t.failurePaths(c.FaultKinds)
	c.mu.Unlock()
	var out Coverage
	for _, op := range ops {
		oc := OperationCoverage{Operation: op.ID, Method: op.Method, Path: op.Path, Fronts: fronts[op.ID]}
		seen := map[int]bool{}
		for _, st := range op.Declared {
			seen[st] = true
			oc.Statuses = append(oc.Statuses, StatusCoverage{Status: st, Count: counts[op.ID][st], Declared: true})
		}
		for st, n := range counts[op.ID] {
			if !seen[st] {
				oc.Statuses = append(oc.Statuses, StatusCoverage{Status: st, Count: n})
			}
		}
		slices.SortFunc(oc.Statuses, func(a, b StatusCoverage) int { return a.Status - b.Status })
		any := false
		for _, sc := range oc.Statuses {
			if sc.Declared {
				out.Summary.StatusesDeclared++
			}
			if sc.Count > 0 {
				any = true
				if sc.Declared {
					out.Summary.StatusesExercised++
				}
			}
		}
		if any {
			out.Summary.OperationsExercised++
		}
		out.Summary.Operations++
		out.Operations = append(out.Operations, oc)
	}
	out.Lifecycle = lifecycle
	out.FailurePaths = failures
	out.Summary.FaultKinds = len(failures)
	for _, f := range failures {
		if f.Met > 0 {
			out.Summary.FaultKindsMet++
		}
	}
	out.Summary.LifecyclePaths = len(out.Lifecycle)
	for _, n := range out.Lifecycle {
		if n > 0 {
			out.Summary.LifecycleTaken++
		}
	}
	return out
}
