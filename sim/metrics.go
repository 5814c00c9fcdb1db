package sim

import (
	"slices"
	"strings"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
)

// JobDurationBuckets are the upper bounds, in seconds of the simulated
// clock, of the buckets Stats counts job durations in: from creation to
// the final status, waits for a slot included.
var JobDurationBuckets = []float64{1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// Lanes are the lanes jobs run in: one per modality, and encore. Each has
// its own concurrency limit per workspace.
func Lanes() []string { return append(fixtures.ModalityNames(), "encore") }

// JobStatuses are the statuses a job goes through.
var JobStatuses = []string{StatusQueued, StatusProcessing, StatusCompleted, StatusFailed}

// Stats are the engine's figures for a metrics scrape. The counters
// (Credits, Durations) count since the engine opened, across resets; the
// rest is the state as it is.
type Stats struct {
	// Credits are the credits moved, by ledger entry type (grant, charge,
	// refund, gift: what a gift covered), since the engine opened.
	Credits map[string]int64
	// Durations are the durations of the jobs that ended, by lane and final
	// status, on the simulated clock.
	Durations []JobDurations
	// Jobs counts the jobs held, by lane and status.
	Jobs map[JobKey]int
	// Lanes are the queues and slots of each lane, summed over workspaces.
	Lanes []LaneStats
	// LongPolls counts the reads waiting for a job (wait_seconds) now.
	LongPolls int
	// Sandboxes counts the sandboxes that exist.
	Sandboxes int
}

// JobKey is a lane and a status.
type JobKey struct{ Lane, Status string }

// JobDurations is a histogram of the durations of the jobs of one lane
// that ended with one status.
type JobDurations struct {
	JobKey
	// Buckets count the durations at most each of JobDurationBuckets
	// (cumulative, as Prometheus has them).
	Buckets []uint64
	Count   uint64
	// Sum is the sum of the durations, in seconds.
	Sum float64
}

// LaneStats are a lane's queue and slots, over every workspace.
type LaneStats struct {
	Lane string
	// Queued counts the jobs waiting for a slot; Running those holding one.
	Queued, Running int
	// Limit is how many jobs of the lane one workspace runs at once.
	Limit int
	// AtLimit counts the workspaces running Limit jobs of the lane.
	AtLimit int
}

// meter keeps the engine's counters for metrics, added to once a
// transaction commits.
type meter struct {
	mu        sync.Mutex
	credits   map[string]int64
	durations map[JobKey]*JobDurations

	// The scan of the jobs, kept until the next commit.
	scanMu    sync.Mutex
	scanAt    [2]uint64 // commits and epoch when it was made
	scanned   bool
	jobs      map[JobKey]int
	lanes     []LaneStats
	scanError error
}

// meterNotes are what a transaction adds to the meter once it commits.
type meterNotes struct {
	credits map[string]int64
	ended   []endedJob
}

type endedJob struct {
	key     JobKey
	seconds float64
}

// meterCredits notes a ledger movement.
func (t *tx) meterCredits(le LedgerEntry) {
	if t.bulk != nil {
		return // seeding and restoring replay no movement
	}
	amount := le.Amount
	if le.Type == LedgerGift {
		amount = le.Covered
	}
	if amount < 0 {
		amount = -amount
	}
	if t.meter.credits == nil {
		t.meter.credits = map[string]int64{}
	}
	t.meter.credits[le.Type] += amount
}

// meterEnded notes a job that reached its final status.
func (t *tx) meterEnded(job *Job) {
	if t.bulk != nil {
		return
	}
	d := t.now.Sub(job.CreatedAt.Time())
	t.meter.ended = append(t.meter.ended, endedJob{JobKey{job.Lane, job.Status}, max(d, 0).Seconds()})
}

// add counts what a committed transaction noted.
func (m *meter) add(n *meterNotes) {
	if n.credits == nil && n.ended == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for typ, amount := range n.credits {
		if m.credits == nil {
			m.credits = map[string]int64{}
		}
		m.credits[typ] += amount
	}
	for _, j := range n.ended {
		if m.durations == nil {
			m.durations = map[JobKey]*JobDurations{}
		}
		h := m.durations[j.key]
		if h == nil {
			h = &JobDurations{JobKey: j.key, Buckets: make([]uint64, len(JobDurationBuckets))}
			m.durations[j.key] = h
		}
		for i, le := range JobDurationBuckets {
			if j.seconds <= le {
				h.Buckets[i]++
			}
		}
		h.Count++
		h.Sum += j.seconds
	}
}

// Stats reads the engine's figures for metrics. The counters are read as
// they are; the jobs and lanes are read from the state once per commit (a
// scrape of an idle server reads nothing), without applying what is due:
// a scrape changes nothing. The maps are the engine's: read them only.
func (e *Engine) Stats() (Stats, error) {
	s := Stats{LongPolls: int(e.polls.Load())}
	e.mu.RLock()
	s.Sandboxes = len(e.sandboxes.byID)
	e.mu.RUnlock()
	e.meter.mu.Lock()
	s.Credits = make(map[string]int64, len(e.meter.credits))
	for k, v := range e.meter.credits {
		s.Credits[k] = v
	}
	for _, h := range e.meter.durations {
		c := *h
		c.Buckets = slices.Clone(h.Buckets)
		s.Durations = append(s.Durations, c)
	}
	e.meter.mu.Unlock()
	slices.SortFunc(s.Durations, func(a, b JobDurations) int {
		if a.Lane != b.Lane {
			return strings.Compare(a.Lane, b.Lane)
		}
		return strings.Compare(a.Status, b.Status)
	})
	jobs, lanes, err := e.scanJobs()
	s.Jobs, s.Lanes = jobs, lanes
	return s, err
}

// scanJobs counts the jobs by lane and status, and the queues and slots
// of each lane, once per commit.
func (e *Engine) scanJobs() (map[JobKey]int, []LaneStats, error) {
	m := &e.meter
	m.scanMu.Lock()
	defer m.scanMu.Unlock()
	at := [2]uint64{e.db.Commits(), e.epoch.Load()}
	if m.scanned && m.scanAt == at {
		return m.jobs, m.lanes, m.scanError
	}
	jobs := map[JobKey]int{}
	byLane := map[string]*LaneStats{}
	var lanes []LaneStats
	for _, l := range Lanes() {
		lanes = append(lanes, LaneStats{Lane: l, Limit: e.laneLimit(l)})
	}
	for i := range lanes {
		byLane[lanes[i].Lane] = &lanes[i]
	}
	err := e.read(func(btx *bolt.Tx) error {
		var j struct {
			Lane   string `json:"lane"`
			Status string `json:"status"`
		}
		if err := btx.Bucket(bJobs).ForEach(func(_, v []byte) error {
			j.Lane, j.Status = "", ""
			if err := jsonUnmarshal(v, &j); err != nil {
				return err
			}
			jobs[JobKey{j.Lane, j.Status}]++
			return nil
		}); err != nil {
			return err
		}
		// queue: ws|lane|"/"|job; slots: ws|lane -> running.
		if err := btx.Bucket(bQueue).ForEach(func(k, _ []byte) error {
			if len(k) > 17 {
				if l := byLane[string(k[8:len(k)-9])]; l != nil {
					l.Queued++
				}
			}
			return nil
		}); err != nil {
			return err
		}
		return btx.Bucket(bSlots).ForEach(func(k, v []byte) error {
			if len(k) > 8 && len(v) == 8 {
				if l := byLane[string(k[8:])]; l != nil {
					n := int(getU64(v))
					l.Running += n
					if n >= l.Limit {
						l.AtLimit++
					}
				}
			}
			return nil
		})
	})
	m.scanAt, m.scanned, m.jobs, m.lanes, m.scanError = at, true, jobs, lanes, err
	return jobs, lanes, err
}

// pollStarted counts a long poll that waits, until done is called.
func (e *Engine) pollStarted() (done func()) {
	e.polls.Add(1)
	return func() { e.polls.Add(-1) }
}
