package sim

import "sync"

// Coverage counts the lifecycle paths the simulation went through, for the
// whole server and for each workspace.
type coverage struct {
	mu     sync.Mutex
	counts map[string]int
	byWS   map[uint64]map[string]int
}

// lifecycleNote is one lifecycle path taken by a workspace.
type lifecycleNote struct {
	ws   uint64
	path string
}

// Lifecycle paths the coverage report lists.
var LifecyclePaths = []string{
	"generation_completed", "generation_failed_refunded", "queued_at_concurrency_limit", "monthly_gift_used",
	"encore_completed", "encore_failed_refunded", "upload", "publication_now", "scheduled_publication_started",
	"publication_published", "publication_partially_published", "publication_failed", "publication_cancelled",
	"long_poll_waited", "generation_outputs_failed_refunded", "social_account_disconnected",
}

func (c *coverage) add(notes map[lifecycleNote]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	for n, k := range notes {
		c.counts[n.path] += k
		if n.ws == 0 {
			continue
		}
		if c.byWS == nil {
			c.byWS = map[uint64]map[string]int{}
		}
		if c.byWS[n.ws] == nil {
			c.byWS[n.ws] = map[string]int{}
		}
		c.byWS[n.ws][n.path] += k
	}
}

// Lifecycle returns how often each lifecycle path was taken: by every
// workspace when ws is 0, else by one.
func (e *Engine) Lifecycle(ws uint64) map[string]int {
	e.cov.mu.Lock()
	defer e.cov.mu.Unlock()
	counts := e.cov.counts
	if ws != 0 {
		counts = e.cov.byWS[ws]
	}
	out := make(map[string]int, len(LifecyclePaths))
	for _, p := range LifecyclePaths {
		out[p] = counts[p]
	}
	return out
}

// ResetLifecycle forgets the lifecycle counts: all of them when ws is 0,
// else those of one workspace.
func (e *Engine) ResetLifecycle(ws uint64) {
	e.cov.mu.Lock()
	defer e.cov.mu.Unlock()
	if ws == 0 {
		e.cov.counts, e.cov.byWS = nil, nil
		return
	}
	delete(e.cov.byWS, ws)
}

// note counts a lifecycle path of workspace ws once the transaction commits.
func (t *tx) note(ws uint64, path string) {
	if t.notes == nil {
		t.notes = map[lifecycleNote]int{}
	}
	t.notes[lifecycleNote{ws, path}]++
}
