package sim

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mediamock/mediamock/fixtures"
)

// WorkspaceSpec describes a workspace to add at run time.
type WorkspaceSpec struct {
	Name               string   `json:"name"`
	Plan               string   `json:"plan"`
	Credits            int      `json:"credits"`
	RateLimitPerMinute int      `json:"rate_limit_per_minute,omitempty"`
	Scopes             []string `json:"scopes,omitempty"` // of the API key made with it; default all
	Token              string   `json:"token,omitempty"`  // the API key; made up when empty
}

// NewWorkspace is a workspace added at run time and its first API key.
type NewWorkspace struct {
	WorkspaceID uint64   `json:"workspace_id"`
	Name        string   `json:"name"`
	Plan        string   `json:"plan"`
	Credits     int64    `json:"credits"`
	RateLimit   int      `json:"rate_limit_per_minute"`
	Token       string   `json:"token"`
	Scopes      []string `json:"scopes"`
}

// AddWorkspace creates a workspace with an API key.
func (e *Engine) AddWorkspace(spec WorkspaceSpec) (NewWorkspace, error) {
	var v Violations
	if spec.Plan == "" {
		spec.Plan = "pro"
	}
	if _, ok := e.world.Plans[spec.Plan]; !ok {
		v.AddAllowed("plan", anySlice(planIDs(e.world)), "unknown plan %q", spec.Plan)
	}
	if spec.Credits < 0 {
		v.Add("credits", "must not be negative")
	}
	if spec.RateLimitPerMinute < 0 {
		v.Add("rate_limit_per_minute", "must not be negative")
	}
	if len(spec.Scopes) == 0 {
		spec.Scopes = []string{ScopeRead, ScopeGenerate, ScopePublish}
	}
	checkScopes(&v, spec.Scopes)
	if err := v.Err(); err != nil {
		return NewWorkspace{}, err
	}
	var out NewWorkspace
	err := e.update(func(t *tx) error {
		// Every check comes before the first write.
		next := t.b(bWorkspaces).Sequence() + 1
		tok := spec.Token
		if tok != "" && t.b(bTokens).Get([]byte(tok)) != nil {
			return tokenTaken()
		}
		if tok == "" {
			tok = t.freeToken("mk_test_ws", next)
		}
		if spec.Name == "" {
			spec.Name = fmt.Sprintf("Workspace %d", next)
		}
		fw := fixtures.Workspace{Name: spec.Name, Plan: spec.Plan, Credits: spec.Credits, RateLimitPerMinute: spec.RateLimitPerMinute}
		ws, err := t.addWorkspace(fw)
		if err != nil {
			return err
		}
		if err := t.putToken(Token{Token: tok, WorkspaceID: ws.ID, Type: "api_key", Name: "control API", Scopes: spec.Scopes}); err != nil {
			return err
		}
		t.reloadPrincipals = true
		out = NewWorkspace{WorkspaceID: ws.ID, Name: ws.Name, Plan: ws.Plan, Credits: ws.Balance, RateLimit: ws.RateLimit, Token: tok, Scopes: spec.Scopes}
		return nil
	})
	return out, err
}

// TokenSpec describes a token to add to a workspace.
type TokenSpec struct {
	Type   string   `json:"type,omitempty"` // api_key (default) or oauth
	Name   string   `json:"name,omitempty"`
	Scopes []string `json:"scopes"`
	Token  string   `json:"token,omitempty"` // made up when empty
}

// AddToken adds an API key or OAuth access token to a workspace.
func (e *Engine) AddToken(workspaceID uint64, spec TokenSpec) (Token, error) {
	var v Violations
	if spec.Type == "" {
		spec.Type = "api_key"
	}
	if spec.Type != "api_key" && spec.Type != "oauth" {
		v.AddAllowed("type", []any{"api_key", "oauth"}, "unknown token type %q", spec.Type)
	}
	if len(spec.Scopes) == 0 {
		v.Add("scopes", "at least one scope is needed")
	}
	checkScopes(&v, spec.Scopes)
	if err := v.Err(); err != nil {
		return Token{}, err
	}
	var out Token
	err := e.update(func(t *tx) error {
		if _, err := t.workspace(workspaceID); err != nil {
			return err
		}
		if spec.Token != "" && t.b(bTokens).Get([]byte(spec.Token)) != nil {
			return tokenTaken()
		}
		seq, err := t.b(bTokens).NextSequence()
		if err != nil {
			return err
		}
		tok := spec.Token
		if tok == "" {
			prefix := "mk_test_key"
			if spec.Type == "oauth" {
				prefix = "oat_test_token"
			}
			tok = t.freeToken(prefix, seq)
		}
		if spec.Name == "" {
			spec.Name = fmt.Sprintf("token %d", seq)
		}
		out = Token{Token: tok, WorkspaceID: workspaceID, Type: spec.Type, Name: spec.Name, Scopes: spec.Scopes}
		t.reloadPrincipals = true
		return t.putToken(out)
	})
	return out, err
}

func tokenTaken() *Error {
	return &Error{Kind: ECONFLICT, Code: "token_exists", Message: "That token is already in use."}
}

func checkScopes(v *Violations, scopes []string) {
	for i, s := range scopes {
		if !slices.Contains(fixtures.Scopes, s) {
			v.AddAllowed(fmt.Sprintf("scopes[%d]", i), anySlice(fixtures.Scopes), "unknown scope %q", s)
		}
	}
}

func planIDs(w *fixtures.World) []string {
	ids := make([]string, 0, len(w.Plans))
	for id := range w.Plans {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// freeToken makes up a token, derived from the seed, that no one uses yet.
func (t *tx) freeToken(prefix string, n uint64) string {
	for try := uint64(0); ; try++ {
		tok := fmt.Sprintf("%s%d_%012x", prefix, n, DeriveSeed(t.e.seed, "token/"+prefix, n+try<<32)>>16)
		if t.b(bTokens).Get([]byte(tok)) == nil {
			return tok
		}
	}
}

// Workspaces lists every workspace.
func (e *Engine) Workspaces() ([]Workspace, error) {
	var out []Workspace
	err := e.view(func(t *tx) error {
		return t.b(bWorkspaces).ForEach(func(_, v []byte) error {
			var w Workspace
			if err := jsonUnmarshal(v, &w); err != nil {
				return err
			}
			out = append(out, w)
			return nil
		})
	})
	return out, err
}

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

// ownerOf is the workspace of an asset ("a"), Encore creation ("e") or
// publication ("p") id, 0 when unknown: ids are global, records are kept
// per workspace.
func (t *tx) ownerOf(class string, id uint64) uint64 {
	if v := t.b(bOwners).Get(key(class, id)); v != nil {
		return getU64(v)
	}
	return 0
}

// CancelPublicationAny cancels a publication of any workspace.
func (e *Engine) CancelPublicationAny(id uint64) (Publication, error) {
	var ws uint64
	if err := e.db.View(func(btx *bolt.Tx) error {
		ws = e.newTx(btx).ownerOf("p", id)
		return nil
	}); err != nil {
		return Publication{}, err
	}
	return e.CancelPublication(ws, id)
}

// FailPlatform makes every delivery to a platform fail until cleared.
func (e *Engine) FailPlatform(platform string, fail bool) error {
	if !slices.Contains(fixtures.Platforms, platform) && platform != "all" {
		return InvalidError([]Violation{{In: "body", Field: "platform", Reason: fmt.Sprintf("unknown platform %q", platform), Allowed: anySlice(append(slices.Clone(fixtures.Platforms), "all"))}})
	}
	return e.update(func(t *tx) error {
		f, err := t.faults()
		if err != nil {
			return err
		}
		f.FailPlatforms = slices.DeleteFunc(f.FailPlatforms, func(p string) bool { return p == platform })
		if fail {
			f.FailPlatforms = append(f.FailPlatforms, platform)
		}
		return t.putFaults(f)
	})
}

// Reset wipes the state and seeds it again from the fixtures; the clock
// goes back to start.
func (e *Engine) Reset(start time.Time) error {
	return e.update(func(t *tx) error {
		if err := wipe(t.Tx); err != nil {
			return err
		}
		t.e.rate.reset()
		t.e.clock.restore(start)
		t.now = e.clock.Now()
		if err := t.writeMeta(); err != nil {
			return err
		}
		if err := t.nextEpoch(e.epoch.Load()); err != nil {
			return err
		}
		if err := t.seed(); err != nil {
			return err
		}
		t.replaced = true
		return nil
	})
}

func wipe(btx *bolt.Tx) error {
	for _, name := range allBuckets {
		if btx.Bucket(name) != nil {
			if err := btx.DeleteBucket(name); err != nil {
				return err
			}
		}
		if _, err := btx.CreateBucket(name); err != nil {
			return err
		}
	}
	return nil
}

// Snapshot writes a consistent copy of the whole state (a bbolt file).
func (e *Engine) Snapshot(w io.Writer) (int64, error) {
	var n int64
	err := e.db.View(func(btx *bolt.Tx) error {
		var err error
		n, err = btx.WriteTo(w)
		return err
	})
	return n, err
}

// Restore replaces the whole state with a snapshot taken by Snapshot from a
// simulation of the same fixtures and seed; the clock goes to the
// snapshot's time.
func (e *Engine) Restore(r io.Reader) error {
	// Beside the state file: the one place the server may write.
	dir, err := os.MkdirTemp(filepath.Dir(e.cfg.Path), ".restore-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "snapshot.db")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return &Error{Kind: EINVALID, Code: "invalid_snapshot", Message: "The snapshot cannot be read: " + err.Error() + "."}
	}
	if err := f.Close(); err != nil {
		return err
	}
	src, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		return &Error{Kind: EINVALID, Code: "invalid_snapshot", Message: "The snapshot is not a state file: " + err.Error() + "."}
	}
	defer src.Close()
	return src.View(func(stx *bolt.Tx) error {
		meta := stx.Bucket(bMeta)
		if meta == nil || string(meta.Get([]byte("fingerprint"))) != e.fingerprint() || string(meta.Get([]byte("schema"))) != schemaVersion {
			return &Error{Kind: EINVALID, Code: "invalid_snapshot", Message: "The snapshot comes from other fixtures, another seed or another version."}
		}
		return e.update(func(t *tx) error {
			if err := wipe(t.Tx); err != nil {
				return err
			}
			t.e.rate.reset() // the snapshot's windows come with it
			for _, name := range allBuckets {
				sb := stx.Bucket(name)
				if sb == nil {
					continue
				}
				db := t.b(name)
				if err := sb.ForEach(func(k, v []byte) error { return db.Put(bytes.Clone(k), bytes.Clone(v)) }); err != nil {
					return err
				}
				if err := db.SetSequence(sb.Sequence()); err != nil {
					return err
				}
			}
			if v := t.b(bMeta).Get([]byte("clock")); v != nil {
				e.clock.restore(Stamp(getU64(v)).Time())
				t.now = e.clock.Now()
			}
			if err := t.nextEpoch(max(e.epoch.Load(), readEpoch(stx))); err != nil {
				return err
			}
			t.replaced = true
			return nil
		})
	})
}

func (e *Engine) fingerprint() string {
	return fmt.Sprintf("%s/%d", e.world.Fingerprint(), e.seed)
}

// nextEpoch moves file addresses on after a reset or restore.
func (t *tx) nextEpoch(after uint64) error {
	t.epoch = after + 1
	return t.b(bMeta).Put([]byte("epoch"), u64(t.epoch))
}

func (t *tx) writeMeta() error {
	meta := t.b(bMeta)
	if err := meta.Put([]byte("schema"), []byte(schemaVersion)); err != nil {
		return err
	}
	return meta.Put([]byte("fingerprint"), []byte(t.e.fingerprint()))
}

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
