package sim

import "sync"

// Coverage counts the lifecycle paths the simulation went through.
type coverage struct {
	mu     sync.Mutex
	counts map[string]int
}

// Lifecycle paths the coverage report lists.
var LifecyclePaths = []string{
	"generation_completed", "generation_failed_refunded", "queued_at_concurrency_limit", "monthly_gift_used",
	"encore_completed", "encore_failed_refunded", "upload", "publication_now", "scheduled_publication_started",
	"publication_published", "publication_partially_published", "publication_failed", "publication_cancelled",
	"long_poll_waited",
}

func (c *coverage) add(names map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	for n, k := range names {
		c.counts[n] += k
	}
}

// Lifecycle returns how often each lifecycle path was taken.
func (e *Engine) Lifecycle() map[string]int {
	e.cov.mu.Lock()
	defer e.cov.mu.Unlock()
	out := make(map[string]int, len(LifecyclePaths))
	for _, p := range LifecyclePaths {
		out[p] = e.cov.counts[p]
	}
	return out
}

// ResetLifecycle forgets the lifecycle counts.
func (e *Engine) ResetLifecycle() {
	e.cov.mu.Lock()
	defer e.cov.mu.Unlock()
	e.cov.counts = nil
}

// note counts a lifecycle path once the transaction commits.
func (t *tx) note(path string) {
	if t.notes == nil {
		t.notes = map[string]int{}
	}
	t.notes[path]++
}
