package sim

import (
	"context"
	"fmt"
	"net/url"
	"time"
)

// EncoreCreation is an Encore effect video being made from one photo.
type EncoreCreation struct {
	ID          uint64   `json:"id"`
	WorkspaceID uint64   `json:"ws"`
	Effect      string   `json:"effect"`
	Status      string   `json:"status"`
	AssetID     uint64   `json:"asset"` // the video in the library
	JobID       uint64   `json:"job"`
	Source      string   `json:"source"` // image_url, asset_id or character_id
	SourceID    uint64   `json:"source_id,omitempty"`
	Credits     int64    `json:"credits"`
	Error       *Problem `json:"error,omitempty"`
	CreatedAt   Stamp    `json:"created_at"`
}

// EncoreRequest is the body of POST /encore/creations, minus wait_seconds.
type EncoreRequest struct {
	Effect      string  `json:"effect"`
	ImageURL    string  `json:"image_url,omitempty"`
	AssetID     *uint64 `json:"asset_id,omitempty"`
	CharacterID *uint64 `json:"character_id,omitempty"`
}

// EncoreView is a creation with its video asset.
type EncoreView struct {
	EncoreCreation
	Video Asset
}

// EncoreCreated is the outcome of creating an Encore video.
type EncoreCreated struct {
	EncoreView
	CreditsCharged int64
	CreditsBalance int64
}

// MinPhotoSide is the shortest side an Encore photo may have, in pixels.
const MinPhotoSide = 480

// Encore videos are vertical 720x1280.
const encoreWidth, encoreHeight = 720, 1280

// EncoreEffects returns the effect catalog.
func (e *Engine) EncoreEffects() []EncoreEffect {
	out := make([]EncoreEffect, 0, len(e.world.EncoreEffects))
	for _, f := range e.world.EncoreEffects {
		out = append(out, EncoreEffect{Slug: f.Slug, Name: f.Name, Tagline: f.Tagline, Credits: f.Credits,
			DurationSeconds: f.DurationSeconds, AppURL: f.AppURL})
	}
	return out
}

// EncoreEffect is an effect of the catalog.
type EncoreEffect struct {
	Slug, Name, Tagline string
	Credits             int
	DurationSeconds     int
	AppURL              string
}

// CreateEncore starts an Encore creation from exactly one photo source,
// charging the effect's credits.
func (e *Engine) CreateEncore(ctx context.Context, p Principal, req EncoreRequest) (EncoreCreated, error) {
	var v Violations
	eff := e.effects[req.Effect]
	if eff == nil {
		slugs := make([]any, 0, len(e.world.EncoreEffects))
		for _, f := range e.world.EncoreEffects {
			slugs = append(slugs, f.Slug)
		}
		v.AddAllowed("effect", slugs, "unknown effect %q", req.Effect)
	}
	sources := 0
	for _, set := range []bool{req.ImageURL != "", req.AssetID != nil, req.CharacterID != nil} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		v.Add("image_url", "exactly one of image_url, asset_id and character_id must be provided (got %d)", sources)
	}
	text := ""
	if req.ImageURL != "" && sources == 1 {
		img, err := e.resolveImage(ctx, p.WorkspaceID, req.ImageURL, false)
		switch be := AsError(err); {
		case err == nil:
			if s := min(img.Width, img.Height); s < MinPhotoSide {
				v.Add("image_url", "the photo is %dx%d; its shorter side must be at least %d px", img.Width, img.Height, MinPhotoSide)
			}
		case be.Kind == EINTERNAL || be.Kind == ETOOLARGE:
			return EncoreCreated{}, err
		default:
			v.Add("image_url", "%s", be.Message)
		}
		text = req.ImageURL
		if u, err := url.QueryUnescape(req.ImageURL); err == nil {
			text = u
		}
	}
	var out EncoreCreated
	err := e.update(func(t *tx) error {
		vv := v
		source, sourceID := "image_url", uint64(0)
		if sources == 1 && req.AssetID != nil {
			source, sourceID = "asset_id", *req.AssetID
			a, err := t.asset(p.WorkspaceID, *req.AssetID)
			switch {
			case err != nil:
				vv.Add("asset_id", "asset %d not found in this workspace", *req.AssetID)
			case a.Kind != KindImage:
				vv.Add("asset_id", "asset %d is a %s, not an image", a.ID, a.Kind)
			case a.Status != StatusCompleted:
				vv.Add("asset_id", "asset %d is %s, not completed", a.ID, a.Status)
			case min(a.Width, a.Height) < MinPhotoSide:
				vv.Add("asset_id", "asset %d is %dx%d; its shorter side must be at least %d px", a.ID, a.Width, a.Height, MinPhotoSide)
			default:
				text = a.Title + " " + a.Prompt
			}
		}
		if sources == 1 && req.CharacterID != nil {
			source, sourceID = "character_id", *req.CharacterID
			var c Character
			ok, err := getJSON(t.b(bCharacters), key(p.WorkspaceID, *req.CharacterID), &c)
			switch {
			case err != nil:
				return err
			case !ok:
				vv.Add("character_id", "character %d not found in this workspace", *req.CharacterID)
			case c.Status != "ready":
				vv.Add("character_id", "character %d is %s, not ready", c.ID, c.Status)
			default:
				text = c.Name + " " + c.Description
			}
		}
		if err := vv.Err(); err != nil {
			return err
		}
		ws, err := t.workspace(p.WorkspaceID)
		if err != nil {
			return err
		}
		moderated := t.moderation(ws.ID, "encore", eff.Slug, text)
		if moderated == ModeratedAtCreation {
			return Moderated("photo")
		}
		cost := int64(eff.Credits)
		if ws.Balance < cost {
			return insufficient(cost, ws.Balance, "Encore effect "+eff.Slug)
		}
		// Every check passed: from here on, write.
		c := &EncoreCreation{WorkspaceID: ws.ID, Effect: eff.Slug, Status: StatusQueued, Source: source, SourceID: sourceID,
			Credits: cost, CreatedAt: StampOf(t.now)}
		if c.ID, err = t.b(bEncore).NextSequence(); err != nil {
			return err
		}
		job := &Job{WorkspaceID: ws.ID, Type: "encore", Lane: "encore", ModelID: eff.Slug, Status: StatusQueued,
			Charged: cost, EncoreID: c.ID, CreatedAt: StampOf(t.now)}
		if job.ID, err = t.b(bJobs).NextSequence(); err != nil {
			return err
		}
		video := &Asset{WorkspaceID: ws.ID, JobID: job.ID, Source: SourceEncore, Kind: KindVideo, Status: StatusQueued,
			Title: eff.Name, Credits: cost, MimeType: "video/mp4",
			Width: encoreWidth, Height: encoreHeight, DurationSeconds: eff.DurationSeconds,
			Media: &Media{AspectRatio: "9:16", SourceAsset: sourceID}, CreatedAt: StampOf(t.now)}
		if err := t.insertAsset(video); err != nil {
			return err
		}
		c.AssetID, c.JobID = video.ID, job.ID
		job.AssetIDs = []uint64{video.ID}
		job.QueuedFor, job.ProcessFor = e.jobDurations(eff.Timing, job.ID, 1, eff.DurationSeconds, 0)
		if err := t.putEncore(c); err != nil {
			return err
		}
		if err := t.b(bOwners).Put(key("e", c.ID), u64(ws.ID)); err != nil {
			return err
		}
		if err := t.decideFate(job, "encore", eff.Slug, eff.FailureRate, text, moderated); err != nil {
			return err
		}
		ws.Balance -= cost
		if err := t.record(ws, LedgerEntry{Type: LedgerCharge, Amount: cost, JobID: job.ID, AssetIDs: job.AssetIDs,
			EncoreID: c.ID, Effect: eff.Slug, Description: "Encore effect " + eff.Slug}); err != nil {
			return err
		}
		if err := t.putWorkspace(ws); err != nil {
			return err
		}
		if err := t.admit(job); err != nil {
			return err
		}
		view, err := t.encoreView(ws.ID, c.ID)
		if err != nil {
			return err
		}
		out = EncoreCreated{EncoreView: view, CreditsCharged: cost, CreditsBalance: ws.Balance}
		return nil
	})
	return out, err
}

// syncEncore mirrors the job's state on its Encore creation.
func (t *tx) syncEncore(job *Job) error {
	c, err := t.encore(job.WorkspaceID, job.EncoreID)
	if err != nil {
		return err
	}
	c.Status = job.Status
	if job.Status == StatusFailed {
		c.Error, c.Credits = job.Failure, 0
	}
	return t.putEncore(c)
}

func (t *tx) encore(ws, id uint64) (*EncoreCreation, error) {
	var c EncoreCreation
	ok, err := getJSON(t.b(bEncore), key(ws, id), &c)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound("Encore creation", id)
	}
	return &c, nil
}

func (t *tx) putEncore(c *EncoreCreation) error {
	return putJSON(t.b(bEncore), key(c.WorkspaceID, c.ID), c)
}

func (t *tx) encoreView(ws, id uint64) (EncoreView, error) {
	c, err := t.encore(ws, id)
	if err != nil {
		return EncoreView{}, err
	}
	a, err := t.asset(ws, c.AssetID)
	if err != nil {
		return EncoreView{}, err
	}
	return EncoreView{EncoreCreation: *c, Video: *a}, nil
}

// Encore reads a creation, waiting up to wait for a final state.
func (e *Engine) Encore(ctx context.Context, p Principal, id uint64, wait time.Duration) (EncoreView, error) {
	var jobID uint64
	read := func() (EncoreView, bool, error) {
		var v EncoreView
		err := e.view(func(t *tx) error {
			var err error
			v, err = t.encoreView(p.WorkspaceID, id)
			jobID = v.JobID
			return err
		})
		if err == nil {
			reportProgress(ctx, v.Status)
		}
		return v, err == nil && Final(v.Status), err
	}
	v, final, err := read()
	if err != nil || final || wait <= 0 {
		return v, err
	}
	return waitFor(ctx, e, p.WorkspaceID, jobID, wait, read)
}

// ShareURL is the public share link of a completed creation.
func (e *Engine) ShareURL(c EncoreCreation) string {
	return fmt.Sprintf("%s/encore/share/%d-%016x", e.world.AppURL, c.ID, DeriveSeed(e.seed, "share", c.ID))
}
