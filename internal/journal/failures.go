package journal

import (
	"slices"
	"strings"
)

// What a client did after it met a fault: the request of the same
// workspace that came next.
const (
	NextRetried       = "retried"            // the same operation, file or MCP method again
	NextResumedRange  = "resumed_with_range" // the same file, with a Range header
	NextReread        = "reread"             // the asset or generation read again, for a fresh file address
	NextReinitialized = "reinitialized"      // an MCP initialize: a new session
	NextResumedStream = "resumed_stream"     // an MCP GET with Last-Event-ID
	NextOther         = "other"              // something else
)

// Exchange is what the coverage of failure paths reads of a recorded
// request.
type Exchange struct {
	Workspace uint64
	Method    string
	Path      string
	Operation string
	MCPMethod string
	// Ranged: it carried a Range header; Resuming: a Last-Event-ID header.
	Ranged, Resuming bool
	// Background: a request a client library makes by itself (MCP's
	// standalone event stream), not the client's next step.
	Background bool
	// Faults are the kinds of fault it met.
	Faults []string
}

// Waiting reports whether a fault waits for a workspace's next request.
func (c *Counts) Waiting() bool { return c.waiting.Load() > 0 }

// Next counts what a workspace's request did after the workspace's last
// fault, if one waits. Fronts call it before the request is answered, so
// that a client's next step is counted in the order it took it.
func (c *Counts) Next(x Exchange) {
	if x.Background || !c.Waiting() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[x.Workspace]
	if !ok {
		return
	}
	delete(c.pending, x.Workspace)
	c.waiting.Store(int64(len(c.pending)))
	next := classify(p, x)
	for _, kind := range p.Faults {
		c.all.next(kind, next)
		if t := c.scoped(x.Workspace); t != nil {
			t.next(kind, next)
		}
	}
}

// Met counts the faults an exchange met; the workspace's next request is
// then waited for.
func (c *Counts) Met(x Exchange) {
	if len(x.Faults) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, kind := range x.Faults {
		c.all.met(kind)
		if t := c.scoped(x.Workspace); t != nil {
			t.met(kind)
		}
	}
	if c.pending == nil {
		c.pending = map[uint64]Exchange{}
	}
	if len(c.pending) < maxPending {
		c.pending[x.Workspace] = x
	}
	c.waiting.Store(int64(len(c.pending)))
}

// maxPending bounds the workspaces waiting for their next request.
const maxPending = 4096

// scoped is the tally of a workspace, made on first use; nil for none.
func (c *Counts) scoped(ws uint64) *tally {
	if ws == 0 {
		return nil
	}
	if c.byWS == nil {
		c.byWS = map[uint64]*tally{}
	}
	t := c.byWS[ws]
	if t == nil {
		t = &tally{}
		c.byWS[ws] = t
	}
	return t
}

func classify(prev, x Exchange) string {
	switch {
	case slices.Contains(strings.Split(x.MCPMethod, ","), "initialize"):
		return NextReinitialized
	case x.Method == "GET" && x.Resuming:
		return NextResumedStream
	case x.Path == prev.Path && prev.Operation == "" && x.Ranged:
		return NextResumedRange
	case x.Operation != "" && x.Operation == prev.Operation,
		prev.Operation == "" && x.Path == prev.Path && x.MCPMethod == prev.MCPMethod:
		return NextRetried
	case prev.Operation == "" && (x.Operation == "getAsset" || x.Operation == "getGeneration" || x.Operation == "listAssets"):
		return NextReread
	}
	return NextOther
}

func (t *tally) met(kind string) {
	if t.faults == nil {
		t.faults = map[string]*FailurePath{}
	}
	f := t.faults[kind]
	if f == nil {
		f = &FailurePath{Kind: kind, Next: map[string]int{}}
		t.faults[kind] = f
	}
	f.Met++
}

func (t *tally) next(kind, what string) {
	if f := t.faults[kind]; f != nil {
		f.Next[what]++
	}
}

// failurePaths reports every kind, in order, with what was met of it.
func (t *tally) failurePaths(kinds []string) []FailurePath {
	out := make([]FailurePath, 0, len(kinds))
	for _, k := range kinds {
		fp := FailurePath{Kind: k, Next: map[string]int{}}
		if f := t.faults[k]; f != nil {
			fp.Met = f.Met
			for n, v := range f.Next {
				fp.Next[n] = v
			}
		}
		out = append(out, fp)
	}
	return out
}
