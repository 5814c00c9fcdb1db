package sim

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// This file holds the reads of the control API and the dashboard: views
// across workspaces that the service's API, always on behalf of one
// workspace, never gives.

// WorkspaceDetail is a workspace with its gifts, its current rate window
// and its tokens.
type WorkspaceDetail struct {
	Workspace
	Gifts  []GiftView
	Rate   RateDecision // the current window, read without counting a request
	Tokens []Token
}

// WorkspaceDetail reads a workspace, its tokens and its current rate
// window (without counting a request).
func (e *Engine) WorkspaceDetail(id uint64) (WorkspaceDetail, error) {
	var out WorkspaceDetail
	err := e.view(func(t *tx) error {
		ws, err := t.workspace(id)
		if err != nil {
			return err
		}
		out.Workspace = *ws
		out.Gifts = giftViews(ws, t.now)
		return nil
	})
	// The workspace's own tokens, from the index of them: it costs the same
	// beside 1 workspace or 10,000.
	e.mu.RLock()
	for _, tok := range e.tokensByWS[id] {
		if v, ok := e.tokens[tok]; ok {
			out.Tokens = append(out.Tokens, v)
		}
	}
	e.mu.RUnlock()
	slices.SortFunc(out.Tokens, func(a, b Token) int { return strings.Compare(a.Token, b.Token) })
	if err != nil {
		return WorkspaceDetail{}, err
	}
	out.Rate = e.RateWindow(id)
	return out, nil
}

// giftViews are the workspace's monthly gifts as of now's month.
func giftViews(ws *Workspace, now time.Time) []GiftView {
	month := now.Format("2006-01")
	y, m, _ := now.Date()
	renews := time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
	var out []GiftView
	for _, g := range ws.Gifts {
		used := g.Used
		if g.Month != month {
			used = 0
		}
		out = append(out, GiftView{ModelID: g.ModelID, PerMonth: g.PerMonth, Remaining: max(0, g.PerMonth-used), RenewsAt: renews})
	}
	return out
}

// JobQuery filters and pages the jobs of every workspace.
type JobQuery struct {
	WorkspaceID   uint64 // 0 for every workspace
	Type          string // generation or encore; "" for both
	Status        string
	StartingAfter uint64 // a job id
	Limit         int
}

// JobInfo is a job with what a person looks for in a list of jobs.
type JobInfo struct {
	Job
	Kind   string // the kind of its assets
	Prompt string // of a generation
	// Encore is the creation of an Encore job.
	Encore *EncoreCreation
}

// Jobs lists the jobs of every workspace (or one), newest first.
func (e *Engine) Jobs(q JobQuery) (Page[JobInfo], error) {
	var pg Page[JobInfo]
	err := e.view(func(t *tx) error {
		c := t.b(bJobs).Cursor()
		k, v := c.Last()
		if q.StartingAfter > 0 {
			k, v = seekBelow(c, u64(q.StartingAfter))
		}
		for ; k != nil; k, v = c.Prev() {
			var j Job
			if err := jsonUnmarshal(v, &j); err != nil {
				return err
			}
			if (q.WorkspaceID != 0 && j.WorkspaceID != q.WorkspaceID) || (q.Type != "" && j.Type != q.Type) ||
				(q.Status != "" && j.Status != q.Status) {
				continue
			}
			if len(pg.Data) == q.Limit {
				pg.HasMore = true
				return nil
			}
			info := JobInfo{Job: j}
			if len(j.AssetIDs) > 0 {
				a, err := t.asset(j.WorkspaceID, j.AssetIDs[0])
				if err != nil {
					return err
				}
				info.Kind, info.Prompt = a.Kind, a.Prompt
			}
			if j.EncoreID != 0 {
				c, err := t.encore(j.WorkspaceID, j.EncoreID)
				if err != nil {
					return err
				}
				info.Encore = c
			}
			pg.Data = append(pg.Data, info)
		}
		return nil
	})
	return pg, err
}

// LibraryItem is an asset with the Encore creation that made it, if one did.
type LibraryItem struct {
	Asset
	Encore *EncoreCreation
}

// Library lists the assets of one workspace, or of every workspace (ws 0),
// newest first, with the filters of the service's asset list.
func (e *Engine) Library(ws uint64, q AssetQuery) (Page[LibraryItem], error) {
	ids := []uint64{ws}
	if ws == 0 {
		ids = e.workspaceIDs()
	}
	var all []Asset
	var more bool
	for _, id := range ids {
		pg, err := e.ListAssets(Principal{WorkspaceID: id}, q)
		if err != nil {
			return Page[LibraryItem]{}, err
		}
		all, more = append(all, pg.Data...), more || pg.HasMore
	}
	// Asset ids are global: the newest of every workspace's page.
	slices.SortFunc(all, func(a, b Asset) int { return cmp.Compare(b.ID, a.ID) })
	if len(all) > q.Limit {
		all, more = all[:q.Limit], true
	}
	out := Page[LibraryItem]{Data: make([]LibraryItem, 0, len(all)), HasMore: more}
	err := e.view(func(t *tx) error {
		for _, a := range all {
			item := LibraryItem{Asset: a}
			if a.Source == SourceEncore && a.JobID != 0 {
				j, err := t.job(a.JobID)
				if err != nil {
					return err
				}
				if item.Encore, err = t.encore(a.WorkspaceID, j.EncoreID); err != nil {
					return err
				}
			}
			out.Data = append(out.Data, item)
		}
		return nil
	})
	return out, err
}

// AllPublications lists the publications of one workspace, or of every
// workspace (ws 0), newest first, optionally of one status.
func (e *Engine) AllPublications(ws uint64, status string, startingAfter uint64, limit int) (Page[Publication], error) {
	ids := []uint64{ws}
	if ws == 0 {
		ids = e.workspaceIDs()
	}
	var out Page[Publication]
	for _, id := range ids {
		pg, err := e.Publications(Principal{WorkspaceID: id}, status, startingAfter, limit)
		if err != nil {
			return Page[Publication]{}, err
		}
		out.Data, out.HasMore = append(out.Data, pg.Data...), out.HasMore || pg.HasMore
	}
	// Publication ids are global too.
	slices.SortFunc(out.Data, func(a, b Publication) int { return cmp.Compare(b.ID, a.ID) })
	if len(out.Data) > limit {
		out.Data, out.HasMore = out.Data[:limit], true
	}
	return out, nil
}

// workspaceIDs are the ids of every workspace, in order.
func (e *Engine) workspaceIDs() []uint64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	ids := make([]uint64, 0, len(e.workspaces))
	for id := range e.workspaces {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// JobRef names a job the way a client knows it: by an asset of its
// generation (AssetID), or by its Encore creation (EncoreID), in a
// workspace.
type JobRef struct {
	WorkspaceID, AssetID, EncoreID uint64
}

// JobOf returns the job a client knows by ref; false when it names none
// (an upload, an unknown id, another workspace's).
func (e *Engine) JobOf(ref JobRef) (Job, bool, error) {
	var out Job
	var found bool
	err := e.view(func(t *tx) error {
		var id uint64
		switch {
		case ref.EncoreID != 0:
			c, err := t.encore(ref.WorkspaceID, ref.EncoreID)
			if err != nil {
				return unlessNotFound(err)
			}
			id = c.JobID
		case ref.AssetID != 0:
			a, err := t.asset(ref.WorkspaceID, ref.AssetID)
			if err != nil {
				return unlessNotFound(err)
			}
			id = a.JobID
		}
		if id == 0 {
			return nil
		}
		j, err := t.job(id)
		if err != nil {
			return err
		}
		out, found = *j, true
		return nil
	})
	return out, found, err
}

// unlessNotFound is err, or nil when it says something was not found.
func unlessNotFound(err error) error {
	if AsError(err).Kind == ENOTFOUND {
		return nil
	}
	return err
}
