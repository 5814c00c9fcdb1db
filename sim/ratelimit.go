package sim

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// RateDecision is the outcome of counting one request against a workspace's
// rate limit, with what the rate-limit headers report.
type RateDecision struct {
	Allowed    bool
	Limit      int
	Remaining  int
	Reset      time.Time     // end of the current window
	RetryAfter time.Duration // whole seconds until Reset, when not allowed
}

// rateWindow is the fixed one-minute window of one workspace.
type rateWindow struct {
	Start int64 `json:"start"` // unix seconds of the window's start
	Count int   `json:"count"`
}

// rateLimiter counts requests per workspace in fixed windows of the
// simulated clock. Counting happens in memory (it is on every request);
// windows are saved with every commit and on close.
type rateLimiter struct {
	mu      sync.Mutex
	windows map[uint64]*rateWindow
	dirty   map[uint64]bool
	// anonymous is the window of the requests without a usable
	// credential: in memory only, no workspace's.
	anonymous rateWindow
}

// AnonymousRateLimit is the limit the anonymous window reports: the
// smallest plan's (the specification's Free plan).
const AnonymousRateLimit = 20

// AllowAnonymous counts a request without a usable credential in the
// server's anonymous window, which no workspace shares, and returns what
// its rate-limit headers report. It never refuses: the request is
// answered 401 whatever the window holds (its Remaining stops at 0).
func (e *Engine) AllowAnonymous() RateDecision {
	r := e.rate
	now := e.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	w := &r.anonymous
	if start := now.Truncate(RateWindow).Unix(); w.Start != start {
		w.Start, w.Count = start, 0
	}
	w.Count++
	d := decision(w, AnonymousRateLimit, now)
	d.Allowed = true
	return d
}

func newRateLimiter() *rateLimiter {
	return &rateLimiter{windows: map[uint64]*rateWindow{}, dirty: map[uint64]bool{}}
}

// RateWindow is the length of a rate-limit window.
const RateWindow = time.Minute

// Allow counts one request of the workspace at the clock's time, unless the
// limit is reached. Requests MCP protocol messages would make are simply not
// counted: callers do not call Allow for them.
func (e *Engine) Allow(workspaceID uint64) RateDecision {
	limit := e.rateLimitOf(workspaceID)
	return e.rate.allow(workspaceID, limit, e.clock.Now())
}

// RateWindow reads the workspace's current window without counting a
// request: what the rate-limit headers report on an answer that is not
// counted (MCP's protocol messages).
func (e *Engine) RateWindow(workspaceID uint64) RateDecision {
	limit := e.rateLimitOf(workspaceID)
	return e.rate.peek(workspaceID, limit, e.clock.Now())
}

func (e *Engine) rateLimitOf(workspaceID uint64) int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if ws := e.workspaces[workspaceID]; ws != nil {
		return ws.RateLimit
	}
	return 0
}

func (r *rateLimiter) window(ws uint64, now time.Time) *rateWindow {
	start := now.Truncate(RateWindow).Unix()
	w := r.windows[ws]
	if w == nil {
		w = &rateWindow{}
		r.windows[ws] = w
	}
	if w.Start != start {
		w.Start, w.Count = start, 0
	}
	return w
}

func (r *rateLimiter) allow(ws uint64, limit int, now time.Time) RateDecision {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.window(ws, now)
	d := decision(w, limit, now)
	if w.Count >= limit {
		d.Allowed = false
		d.RetryAfter = RetryAfter(d.Reset, now)
		return d
	}
	w.Count++
	r.dirty[ws] = true
	d.Allowed = true
	d.Remaining = limit - w.Count
	return d
}

func (r *rateLimiter) peek(ws uint64, limit int, now time.Time) RateDecision {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := rateWindow{Start: now.Truncate(RateWindow).Unix()}
	if cur := r.windows[ws]; cur != nil && cur.Start == w.Start {
		w.Count = cur.Count
	}
	d := decision(&w, limit, now)
	d.Allowed = w.Count < limit
	if !d.Allowed {
		d.RetryAfter = RetryAfter(d.Reset, now)
	}
	return d
}

func decision(w *rateWindow, limit int, now time.Time) RateDecision {
	return RateDecision{
		Limit:     limit,
		Remaining: max(0, limit-w.Count),
		Reset:     time.Unix(w.Start, 0).Add(RateWindow).UTC(),
	}
}

// RetryAfter is the wait, in whole seconds rounded up (at least one), until
// a window that ends at reset reopens.
func RetryAfter(reset, now time.Time) time.Duration {
	d := reset.Sub(now)
	secs := (d + time.Second - 1) / time.Second
	return max(time.Second, secs*time.Second)
}

// forget forgets the window of one workspace (its state is being cleared);
// the next commit deletes it from the file.
func (r *rateLimiter) forget(ws uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.windows, ws)
	delete(r.dirty, ws)
}

// reset forgets every window (the state they belong to is being replaced).
func (r *rateLimiter) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.windows = map[uint64]*rateWindow{}
	r.dirty = map[uint64]bool{}
}

func (r *rateLimiter) flush(t *tx) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := t.b(bRate)
	for ws := range r.dirty {
		if err := putJSON(b, u64(ws), r.windows[ws]); err != nil {
			return err
		}
		delete(r.dirty, ws)
	}
	return nil
}

func (r *rateLimiter) load(btx *bolt.Tx) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.windows = map[uint64]*rateWindow{}
	r.dirty = map[uint64]bool{}
	return btx.Bucket(bRate).ForEach(func(k, v []byte) error {
		var w rateWindow
		if err := json.Unmarshal(v, &w); err != nil {
			return fmt.Errorf("decode rate window: %w", err)
		}
		r.windows[getU64(k)] = &w
		return nil
	})
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// FlushRates writes the rate windows counted since the last commit. Reads
// count requests without committing anything, so a driver calls it on a
// short timer: a process killed after that keeps every request it counted
// (the commit reaches the operating system, which outlives the process; an
// OS crash or power loss can still lose what --durable would have kept).
func (e *Engine) FlushRates() error {
	e.rate.mu.Lock()
	dirty := len(e.rate.dirty) > 0
	e.rate.mu.Unlock()
	if !dirty {
		return nil
	}
	return e.update(func(*tx) error { return nil })
}
