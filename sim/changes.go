package sim

import (
	"slices"
	"sync"
	"time"

	"github.com/mediamock/mediamock/internal/fanout"
)

// ChangeKind says what a Change is about.
type ChangeKind string

// The kinds of changes subscribers receive.
const (
	// ChangeJob: a generation or an Encore creation was created or moved
	// (queued, processing, completed, failed), or was stuck.
	ChangeJob ChangeKind = "job"
	// ChangePublication: a publication was created or one of its
	// deliveries moved.
	ChangePublication ChangeKind = "publication"
	// ChangeLedger: credits moved (a charge, refund, gift or grant).
	ChangeLedger ChangeKind = "ledger"
	// ChangeClock: the clock jumped (advance, set, a waiting client in
	// virtual mode) or changed mode. A real clock flowing is no jump.
	ChangeClock ChangeKind = "clock"
	// ChangeWorkspaces: a workspace or a token was added, or a sandbox was
	// created, reset or deleted.
	ChangeWorkspaces ChangeKind = "workspaces"
	// ChangeReset: the whole state was replaced (reset or restore); what
	// a subscriber knew is stale.
	ChangeReset ChangeKind = "reset"
	// ChangeOverflow: the subscriber's buffer was full and Dropped changes
	// were lost; what it knew may be stale.
	ChangeOverflow ChangeKind = "overflow"
)

// Change is one committed change of the simulation, as subscribers see it.
// Only the fields of its kind are set.
type Change struct {
	Kind ChangeKind
	// At is the simulated time of the change (of a due event: when it was due).
	At          time.Time
	WorkspaceID uint64
	Job         *JobChange   // ChangeJob
	Publication *Publication // ChangePublication: the record as committed
	Ledger      *LedgerEntry // ChangeLedger
	Mode        ClockMode    // ChangeClock: the mode after the change
	Dropped     uint64       // ChangeOverflow
}

// JobChange is the state of a job after a change.
type JobChange struct {
	JobID uint64
	Type  string // generation or encore
	// ID is what clients know the job by: the first asset's id for a
	// generation, the creation's id for an Encore creation.
	ID       uint64
	AssetIDs []uint64
	EncoreID uint64
	Model    string // model id, or effect slug
	Status   string
	Stuck    bool
	Error    *Problem
}

// SubscriptionBuffer is how many changes a subscriber's channel holds
// before changes are dropped (and an overflow marker sent).
const SubscriptionBuffer = 1024

// feed hands committed changes to subscribers. Changes are made only
// while someone listens; publishing never blocks the writer.
type feed struct {
	hub       fanout.Hub[Change]
	watchOnce sync.Once
}

// Subscribe returns a channel of the changes committed from now on and a
// function that ends the subscription (and closes the channel). The
// channel holds SubscriptionBuffer changes: a subscriber that falls
// further behind loses changes, and then receives a ChangeOverflow that
// says how many, in their place. Publishing never waits for a subscriber.
func (e *Engine) Subscribe() (<-chan Change, func()) {
	e.feed.watchOnce.Do(func() { e.clock.onJump(e.clockJumped) })
	// The marker may be made under the clock's lock: it must not read the clock.
	return e.feed.hub.Subscribe(SubscriptionBuffer, func(n uint64) Change { return Change{Kind: ChangeOverflow, Dropped: n} })
}

// clockJumped is called by the clock, under its lock, at every jump.
func (e *Engine) clockJumped(now time.Time, mode ClockMode) {
	e.feed.hub.Publish(Change{Kind: ChangeClock, At: now, Mode: mode})
}

// listening reports whether changes are worth collecting: someone listens,
// and the transaction is not part of a bulk write (a reset or restore says
// only that the state was replaced).
func (t *tx) listening() bool { return t.bulk == nil && t.e.feed.hub.Active() }

// jobChanged collects the job's state for subscribers.
func (t *tx) jobChanged(job *Job) {
	if !t.listening() {
		return
	}
	jc := &JobChange{JobID: job.ID, Type: job.Type, AssetIDs: slices.Clone(job.AssetIDs), EncoreID: job.EncoreID,
		Model: job.ModelID, Status: job.Status, Stuck: job.Fate == "stick" || job.Fate == "hang"}
	jc.ID = job.EncoreID
	if job.Type != "encore" && len(job.AssetIDs) > 0 {
		jc.ID = job.AssetIDs[0]
	}
	if job.Status == StatusFailed {
		jc.Error = job.Failure
	}
	t.changes = append(t.changes, Change{Kind: ChangeJob, At: t.now, WorkspaceID: job.WorkspaceID, Job: jc})
}

// ledgerRecorded collects a ledger entry for subscribers.
func (t *tx) ledgerRecorded(ws uint64, le LedgerEntry) {
	if !t.listening() {
		return
	}
	le.AssetIDs = slices.Clone(le.AssetIDs)
	t.changes = append(t.changes, Change{Kind: ChangeLedger, At: t.now, WorkspaceID: ws, Ledger: &le})
}

// publicationChanged collects a publication's state for subscribers.
func (t *tx) publicationChanged(pub *Publication) {
	if !t.listening() {
		return
	}
	p := *pub
	p.AssetIDs, p.Deliveries = slices.Clone(pub.AssetIDs), slices.Clone(pub.Deliveries)
	t.changes = append(t.changes, Change{Kind: ChangePublication, At: t.now, WorkspaceID: pub.WorkspaceID, Publication: &p})
}

// publishChanges hands what a committed transaction changed to the
// subscribers.
func (t *tx) publishChanges() {
	hub := &t.e.feed.hub
	if !hub.Active() {
		return
	}
	if t.reloadPrincipals || len(t.addedTokens) > 0 || len(t.addedWorkspaces) > 0 || len(t.removedWorkspaces) > 0 ||
		len(t.addedSandboxes) > 0 || len(t.removedSandboxes) > 0 || t.workspacesChanged {
		t.changes = append(t.changes, Change{Kind: ChangeWorkspaces, At: t.now})
	}
	hub.Publish(t.changes...)
}

// replaced tells the subscribers that a bulk write (reset, restore)
// replaced the whole state.
func (f *feed) replaced(at time.Time) {
	f.hub.Publish(Change{Kind: ChangeReset, At: at})
}
