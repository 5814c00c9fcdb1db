package sim

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mediamock/mediamock/fixtures"
)

// Generation is the read view of a generation: its assets and overall status.
type Generation struct {
	Status string
	Assets []Asset
}

// GenerationCreated is the outcome of creating a generation.
type GenerationCreated struct {
	Generation
	CreditsCharged int64
	CreditsBalance int64
	CoveredByGift  bool
}

// CreateGeneration starts a generation: it checks the request against the
// model, charges the credits (or uses a monthly gift) and creates one asset
// per output, all in one transaction.
func (e *Engine) CreateGeneration(ctx context.Context, p Principal, req GenerationRequest) (GenerationCreated, error) {
	r, v := e.checkGeneration(req)
	for i, u := range req.ReferenceImageURLs {
		if _, err := e.resolveImage(ctx, p.WorkspaceID, u, false); err != nil {
			be := AsError(err)
			if be.Kind == EINTERNAL || be.Kind == ETOOLARGE {
				return GenerationCreated{}, err
			}
			v.Add(fmt.Sprintf("reference_image_urls[%d]", i), "%s", be.Message)
		}
	}
	var out GenerationCreated
	err := e.update(func(t *tx) error {
		vv := v
		for i, id := range req.ReferenceAssetIDs {
			if reason := t.checkReference(p.WorkspaceID, id); reason != "" {
				vv.Add(fmt.Sprintf("reference_asset_ids[%d]", i), "%s", reason)
			}
		}
		if err := vv.Err(); err != nil {
			return err
		}
		m := r.model
		ws, err := t.workspace(p.WorkspaceID)
		if err != nil {
			return err
		}
		moderated := t.moderation(ws.ID, m.Modality, m.ID, req.Prompt)
		if moderated == ModeratedAtCreation {
			return Moderated("prompt")
		}
		cost := int64(m.CreditsPerOutput) * int64(r.count)
		gift := ws.takeGift(m.ID, t.now)
		if !gift && ws.Balance < cost {
			return insufficient(cost, ws.Balance, describe(m, r.count))
		}
		// Every check passed: from here on, write.
		job := &Job{WorkspaceID: ws.ID, Type: "generation", Lane: m.Modality, ModelID: m.ID, Status: StatusQueued,
			Gift: gift, CreatedAt: StampOf(t.now)}
		if job.ID, err = t.b(bJobs).NextSequence(); err != nil {
			return err
		}
		perOutput := int64(m.CreditsPerOutput)
		if gift {
			perOutput = 0
			t.note(ws.ID, "monthly_gift_used")
		} else {
			job.Charged = cost
		}
		assets := make([]*Asset, r.count)
		for i := range assets {
			a := &Asset{WorkspaceID: ws.ID, JobID: job.ID, Source: SourceGeneration, Status: StatusQueued, Model: m.ID,
				Prompt: req.Prompt, Credits: perOutput, CreatedAt: StampOf(t.now)}
			r.fill(a, i)
			if err := t.insertAsset(a); err != nil {
				return err
			}
			assets[i] = a
			job.AssetIDs = append(job.AssetIDs, a.ID)
		}
		seconds := r.duration
		if r.kind().Length == fixtures.LengthSpoken {
			seconds = 0 // its timing counts the characters said
		}
		job.QueuedFor, job.ProcessFor = e.jobDurations(m.Timing, job.ID, r.count, seconds, len(req.Prompt))
		if err := t.decideFate(job, m.Modality, m.ID, m.FailureRate, req.Prompt, moderated); err != nil {
			return err
		}
		entry := LedgerEntry{Type: LedgerCharge, Amount: cost, JobID: job.ID, AssetIDs: job.AssetIDs, ModelID: m.ID,
			Description: "generation: " + describe(m, r.count)}
		if gift {
			entry = LedgerEntry{Type: LedgerGift, Covered: cost, JobID: job.ID, AssetIDs: job.AssetIDs, ModelID: m.ID,
				Description: "monthly gift covers generation: " + describe(m, r.count)}
		} else {
			ws.Balance -= cost
		}
		if err := t.record(ws, entry); err != nil {
			return err
		}
		if err := t.putWorkspace(ws); err != nil {
			return err
		}
		if err := t.admit(job); err != nil {
			return err
		}
		g := Generation{Status: job.Status, Assets: make([]Asset, len(assets))}
		for i, a := range assets {
			g.Assets[i] = *a
			g.Assets[i].Status = job.Status // admit may have started the job
		}
		out = GenerationCreated{Generation: g, CreditsCharged: job.Charged, CreditsBalance: ws.Balance, CoveredByGift: gift}
		return nil
	})
	return out, err
}

func insufficient(required, balance int64, what string) *Error {
	return &Error{Kind: EPAYMENT, Code: "insufficient_credits",
		Message: fmt.Sprintf("This costs %d credits (%s); the balance is %d.", required, what, balance),
		Details: map[string]any{"required": required, "balance": balance, "shortfall": required - balance}}
}

// checkReference says why an asset cannot be a reference image ("" if it can).
func (t *tx) checkReference(ws, id uint64) string {
	a, err := t.asset(ws, id)
	switch {
	case err != nil:
		return fmt.Sprintf("asset %d not found in this workspace", id)
	case a.Kind != KindImage:
		return fmt.Sprintf("asset %d is a %s, not an image", id, a.Kind)
	case a.Status != StatusCompleted:
		return fmt.Sprintf("asset %d is %s, not completed", id, a.Status)
	}
	return ""
}

// takeGift uses one monthly gift of the model if one is left this month;
// gifts renew at the start of each calendar month (UTC) of the clock.
func (w *Workspace) takeGift(modelID string, now time.Time) bool {
	month := now.UTC().Format("2006-01")
	for i := range w.Gifts {
		g := &w.Gifts[i]
		if g.ModelID != modelID {
			continue
		}
		if g.Month != month {
			g.Month, g.Used = month, 0
		}
		if g.Used < g.PerMonth {
			g.Used++
			return true
		}
	}
	return false
}

func (e *Engine) jobDurations(t fixtures.Timing, jobID uint64, outputs, seconds, chars int) (int64, int64) {
	q, p := e.durations(t, Rand(e.seed, "job", jobID), outputs, seconds, chars)
	return int64(q), int64(p)
}

// laneLimit is how many jobs of a lane may run at once per workspace.
func (e *Engine) laneLimit(lane string) int {
	if lane == "encore" {
		return e.world.Limits.EncoreConcurrency
	}
	return e.world.Limits.StudioConcurrency
}

// admit starts the job if its lane has a free slot, or queues it.
func (t *tx) admit(job *Job) error {
	t.jobChanged(job)
	sk := key(job.WorkspaceID, job.Lane)
	running := 0
	if v := t.b(bSlots).Get(sk); v != nil {
		running = int(getU64(v))
	}
	if running >= t.e.laneLimit(job.Lane) {
		t.note(job.WorkspaceID, "queued_at_concurrency_limit")
		job.AtLimit = true
		if err := t.b(bQueue).Put(key(job.WorkspaceID, job.Lane, "/", job.ID), nil); err != nil {
			return err
		}
		return t.putJob(job)
	}
	if err := t.b(bSlots).Put(sk, u64(uint64(running+1))); err != nil {
		return err
	}
	return t.startJob(job)
}

// startJob gives the job its slot: the provider's queue time starts now.
func (t *tx) startJob(job *Job) error {
	job.StartedAt = StampOf(t.now)
	switch {
	case job.Fate == "hang":
		// Stuck by the control API while it waited for a slot: it takes the
		// slot and never moves.
		return t.putJob(job)
	case job.Fate == "fail" && job.FailStage == StatusQueued:
		return t.scheduleJob(job, EventJobFinish, time.Duration(job.QueuedFor))
	case job.QueuedFor <= 0:
		return t.enterProcessing(job)
	default:
		return t.scheduleJob(job, EventJobProcess, time.Duration(job.QueuedFor))
	}
}

func (t *tx) enterProcessing(job *Job) error {
	if err := t.setJobStatus(job, StatusProcessing); err != nil {
		return err
	}
	if job.Fate == "stick" {
		job.Due = nil
		return t.putJob(job)
	}
	return t.scheduleJob(job, EventJobFinish, time.Duration(job.ProcessFor))
}

func (t *tx) scheduleJob(job *Job, kind EventKind, after time.Duration) error {
	k, err := t.schedule(t.now.Add(after), Event{Kind: kind, ID: job.ID})
	if err != nil {
		return err
	}
	job.Due = k
	return t.putJob(job)
}

// stepJob applies a job's due event.
func (t *tx) stepJob(k []byte, ev Event) error {
	job, err := t.job(ev.ID)
	if err != nil {
		return err
	}
	if !bytes.Equal(job.Due, k) || Final(job.Status) {
		return nil // superseded by a fault or a control call
	}
	job.Due = nil
	if ev.Kind == EventJobProcess {
		return t.enterProcessing(job)
	}
	if job.Fate == "fail" {
		return t.failJob(job, job.Failure)
	}
	return t.completeJob(job)
}

func (t *tx) completeJob(job *Job) error {
	t.note(job.WorkspaceID, job.Type+"_completed")
	if err := t.setJobStatus(job, StatusCompleted); err != nil {
		return err
	}
	if err := t.failOutputs(job); err != nil {
		return err
	}
	return t.endJob(job)
}

// failOutputs fails job.FailOutputs of a completed generation's outputs,
// drawn from the seed and the job's id, and refunds each one's credits
// (what it was charged, the model's credits_per_output; nothing when a
// monthly gift covered it) in one ledger entry. The generation stays
// completed: at least one output did.
func (t *tx) failOutputs(job *Job) error {
	n := len(job.AssetIDs)
	if job.FailOutputs <= 0 || n < 2 {
		return nil
	}
	why := problemFor(CodeOutputFailed)
	var failed []uint64
	var refund int64
	order := slices.Clone(job.AssetIDs)
	rng := Rand(t.e.seed, "outputs", job.ID)
	for i := len(order) - 1; i > 0; i-- { // Fisher–Yates: which outputs fail
		j := rng.IntN(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	for _, id := range order[:min(job.FailOutputs, n-1)] {
		a, err := t.asset(job.WorkspaceID, id)
		if err != nil {
			return err
		}
		old := a.Status
		refund += a.Credits
		a.Status, a.Error, a.Credits = StatusFailed, why, 0
		if err := t.updateAsset(a, old); err != nil {
			return err
		}
		failed = append(failed, a.ID)
	}
	slices.Sort(failed)
	t.note(job.WorkspaceID, "generation_outputs_failed_refunded")
	if refund == 0 {
		return nil
	}
	ws, err := t.workspace(job.WorkspaceID)
	if err != nil {
		return err
	}
	ws.Balance += refund
	if err := t.record(ws, LedgerEntry{Type: LedgerRefund, Amount: refund, JobID: job.ID, AssetIDs: failed, ModelID: job.ModelID,
		Description: fmt.Sprintf("refund of %d failed output(s) of %d: %s", len(failed), n, why.Code)}); err != nil {
		return err
	}
	return t.putWorkspace(ws)
}

// failJob fails the job and refunds what it charged, exactly once.
func (t *tx) failJob(job *Job, why *Problem) error {
	if why == nil {
		why = &Problem{Code: "provider_error", Message: "The provider failed to generate this output."}
	}
	job.Failure = why
	if err := t.setJobStatus(job, StatusFailed); err != nil {
		return err
	}
	if job.Charged > 0 && !job.Refunded {
		ws, err := t.workspace(job.WorkspaceID)
		if err != nil {
			return err
		}
		ws.Balance += job.Charged
		job.Refunded = true
		t.note(job.WorkspaceID, job.Type+"_failed_refunded")
		entry := LedgerEntry{Type: LedgerRefund, Amount: job.Charged, JobID: job.ID, AssetIDs: job.AssetIDs,
			ModelID: job.ModelID, EncoreID: job.EncoreID, Description: "refund of failed " + job.Type + ": " + why.Code}
		if job.Type == "encore" {
			entry.ModelID, entry.Effect = "", job.ModelID
		}
		if err := t.record(ws, entry); err != nil {
			return err
		}
		if err := t.putWorkspace(ws); err != nil {
			return err
		}
	}
	return t.endJob(job)
}

// endJob releases the job's slot and starts the next queued job of its lane.
func (t *tx) endJob(job *Job) error {
	job.FinishedAt = StampOf(t.now)
	t.meterEnded(job)
	if err := t.unschedule(job.Due); err != nil {
		return err
	}
	job.Due = nil
	if err := t.putJob(job); err != nil {
		return err
	}
	if job.StartedAt.IsZero() {
		// It never had a slot: it leaves the queue.
		return t.b(bQueue).Delete(key(job.WorkspaceID, job.Lane, "/", job.ID))
	}
	prefix := key(job.WorkspaceID, job.Lane, "/")
	c := t.b(bQueue).Cursor()
	if k, _ := c.Seek(prefix); k != nil && hasPrefix(k, prefix) {
		next, err := t.job(getU64(k[len(prefix):]))
		if err != nil {
			return err
		}
		if err := t.b(bQueue).Delete(bytes.Clone(k)); err != nil {
			return err
		}
		return t.startJob(next) // it takes over the slot
	}
	sk := key(job.WorkspaceID, job.Lane)
	running := int(getU64(t.b(bSlots).Get(sk)))
	return t.b(bSlots).Put(sk, u64(uint64(max(0, running-1))))
}

// setJobStatus moves the job and its assets to status.
func (t *tx) setJobStatus(job *Job, status string) error {
	job.Status = status
	t.touch(job.ID)
	t.jobChanged(job)
	for _, id := range job.AssetIDs {
		a, err := t.asset(job.WorkspaceID, id)
		if err != nil {
			return err
		}
		old := a.Status
		a.Status = status
		if status == StatusFailed {
			a.Error = job.Failure
			a.Credits = 0 // refunded, or never charged
		}
		if err := t.updateAsset(a, old); err != nil {
			return err
		}
	}
	if job.EncoreID != 0 {
		return t.syncEncore(job)
	}
	return nil
}

func (t *tx) job(id uint64) (*Job, error) {
	var j Job
	ok, err := getJSON(t.b(bJobs), u64(id), &j)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("job %d missing", id)
	}
	return &j, nil
}

func (t *tx) putJob(j *Job) error { return putJSON(t.b(bJobs), u64(j.ID), j) }

// generationOf reads the job's assets and their overall status.
func (t *tx) generationOf(job *Job) (Generation, error) {
	g := Generation{Status: job.Status, Assets: make([]Asset, 0, len(job.AssetIDs))}
	for _, id := range job.AssetIDs {
		a, err := t.asset(job.WorkspaceID, id)
		if err != nil {
			return Generation{}, err
		}
		g.Assets = append(g.Assets, *a)
	}
	return g, nil
}

// generation reads the generation an asset belongs to.
func (t *tx) generation(ws, assetID uint64) (Generation, uint64, error) {
	a, err := t.asset(ws, assetID)
	if err != nil {
		return Generation{}, 0, err
	}
	if a.JobID == 0 {
		return Generation{Status: a.Status, Assets: []Asset{*a}}, 0, nil
	}
	job, err := t.job(a.JobID)
	if err != nil {
		return Generation{}, 0, err
	}
	g, err := t.generationOf(job)
	return g, job.ID, err
}

// Generation reads the generation of an asset, waiting up to wait for it to
// reach a final state.
func (e *Engine) Generation(ctx context.Context, p Principal, assetID uint64, wait time.Duration) (Generation, error) {
	var jobID uint64
	read := func() (Generation, bool, error) {
		var g Generation
		err := e.view(func(t *tx) error {
			var err error
			g, jobID, err = t.generation(p.WorkspaceID, assetID)
			return err
		})
		if err == nil {
			reportProgress(ctx, g.Status)
		}
		return g, err == nil && Final(g.Status), err
	}
	if wait <= 0 {
		g, _, err := read()
		return g, err
	}
	// The first read finds the job to watch.
	if _, _, err := read(); err != nil {
		return Generation{}, err
	}
	return waitFor(ctx, e, p.WorkspaceID, jobID, wait, read)
}
