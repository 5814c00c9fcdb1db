package sim

import "fmt"

// JobAction is what the control API does to a job that has not ended.
type JobAction string

// The actions on jobs.
const (
	JobFail     JobAction = "fail"     // fail it now, refunding its credits
	JobStick    JobAction = "stick"    // it never moves again
	JobComplete JobAction = "complete" // complete it now
)

// ControlAsset applies an action to the job of an asset (any workspace).
func (e *Engine) ControlAsset(assetID uint64, action JobAction, code string) (Generation, error) {
	var out Generation
	err := e.update(func(t *tx) error {
		ws := t.ownerOf("a", assetID)
		a, err := t.asset(ws, assetID)
		if err != nil {
			return err
		}
		if a.JobID == 0 {
			return &Error{Kind: ECONFLICT, Code: "not_a_job", Message: fmt.Sprintf("Asset %d was not generated (an upload or a library asset); it has no job.", assetID)}
		}
		job, err := t.job(a.JobID)
		if err != nil {
			return err
		}
		if err := t.controlJob(job, action, code); err != nil {
			return err
		}
		out, err = t.generationOf(job)
		return err
	})
	return out, err
}

// ControlEncore applies an action to an Encore creation (any workspace).
func (e *Engine) ControlEncore(creationID uint64, action JobAction, code string) (EncoreView, error) {
	var out EncoreView
	err := e.update(func(t *tx) error {
		ws := t.ownerOf("e", creationID)
		c, err := t.encore(ws, creationID)
		if err != nil {
			return err
		}
		job, err := t.job(c.JobID)
		if err != nil {
			return err
		}
		if err := t.controlJob(job, action, code); err != nil {
			return err
		}
		out, err = t.encoreView(ws, creationID)
		return err
	})
	return out, err
}

func (t *tx) controlJob(job *Job, action JobAction, code string) error {
	if Final(job.Status) {
		return &Error{Kind: ECONFLICT, Code: "job_finished", Message: fmt.Sprintf("The job already ended (%s).", job.Status)}
	}
	switch action {
	case JobFail:
		if err := t.unschedule(job.Due); err != nil {
			return err
		}
		job.Due, job.Fate = nil, "fail"
		return t.failJob(job, problemFor(code))
	case JobStick:
		if err := t.unschedule(job.Due); err != nil {
			return err
		}
		job.Due, job.Fate = nil, "stick"
		if job.StartedAt.IsZero() {
			job.Fate = "hang" // still waiting for a slot
		}
		t.jobChanged(job)
		return t.putJob(job)
	case JobComplete:
		if err := t.unschedule(job.Due); err != nil {
			return err
		}
		job.Due, job.Fate = nil, ""
		if job.StartedAt.IsZero() {
			// It leaves the queue without ever holding a slot.
			if err := t.b(bQueue).Delete(key(job.WorkspaceID, job.Lane, "/", job.ID)); err != nil {
				return err
			}
			job.StartedAt = StampOf(t.now)
			job.Status = StatusQueued
			if err := t.setJobStatus(job, StatusCompleted); err != nil {
				return err
			}
			job.FinishedAt = StampOf(t.now)
			return t.putJob(job)
		}
		return t.completeJob(job)
	}
	return &Error{Kind: EINVALID, Code: "validation_failed", Message: fmt.Sprintf("Unknown action %q (fail, stick or complete).", action)}
}
