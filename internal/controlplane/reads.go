package controlplane

import (
	"net/http"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// The reads across workspaces: what a person (the dashboard) or a script
// looks at while the service's API shows one workspace at a time.

// page is the paging of a list (validated by control.json).
type page struct {
	StartingAfter uint64 `query:"starting_after"`
	Limit         int    `query:"limit" default:"50"`
}

// workspaceFilter is the workspace a cross-workspace read is narrowed to:
// the query's, or the sandbox a sandbox's token is bound to.
func (r *request) workspaceFilter(query uint64) uint64 {
	if r.scope.Bound {
		return r.scope.WS
	}
	return query
}

// jobJSON is a generation or an Encore creation as a job.
type jobJSON struct {
	// ID is what clients know the job by: its first asset's id (a
	// generation) or its creation's id (Encore); the job actions take it.
	ID          uint64       `json:"id"`
	JobID       uint64       `json:"job_id"`
	Kind        string       `json:"kind"`
	WorkspaceID uint64       `json:"workspace_id"`
	Status      string       `json:"status"`
	Model       string       `json:"model,omitempty"`
	Effect      string       `json:"effect,omitempty"`
	AssetKind   string       `json:"asset_kind,omitempty"`
	Prompt      string       `json:"prompt,omitempty"`
	AssetIDs    []uint64     `json:"asset_ids"`
	EncoreID    uint64       `json:"encore_creation_id,omitempty"`
	Charged     int64        `json:"credits_charged"`
	Refunded    bool         `json:"refunded"`
	Gift        bool         `json:"covered_by_monthly_gift"`
	Stuck       bool         `json:"stuck"`
	Error       *sim.Problem `json:"error,omitempty"`
	CreatedAt   string       `json:"created_at"`
	StartedAt   string       `json:"started_at,omitempty"`
	FinishedAt  string       `json:"finished_at,omitempty"`
}

func jobOf(j sim.JobInfo) jobJSON {
	out := jobJSON{JobID: j.ID, Kind: j.Type, WorkspaceID: j.WorkspaceID, Status: j.Status, AssetKind: j.Kind, Prompt: j.Prompt,
		AssetIDs: j.AssetIDs, EncoreID: j.EncoreID, Charged: j.Charged, Refunded: j.Refunded, Gift: j.Gift,
		Stuck: j.Fate == "stick" || j.Fate == "hang", CreatedAt: j.CreatedAt.String(), StartedAt: stamp(j.StartedAt),
		FinishedAt: stamp(j.FinishedAt)}
	if out.AssetIDs == nil {
		out.AssetIDs = []uint64{}
	}
	if j.Status == sim.StatusFailed {
		out.Error = j.Failure
	}
	if j.Type == "encore" {
		out.ID, out.Effect = j.EncoreID, j.ModelID
	} else {
		out.Model = j.ModelID
		if len(j.AssetIDs) > 0 {
			out.ID = j.AssetIDs[0]
		}
	}
	return out
}

func stamp(s sim.Stamp) string {
	if s.IsZero() {
		return ""
	}
	return s.String()
}

type jobsInput struct {
	page
	WorkspaceID uint64 `query:"workspace_id"`
	Kind        string `query:"kind"`
	Status      string `query:"status"`
}

func listJobs(r *request, in jobsInput) (int, any, error) {
	pg, err := r.p.Eng.Jobs(sim.JobQuery{WorkspaceID: r.workspaceFilter(in.WorkspaceID), Type: in.Kind, Status: in.Status,
		StartingAfter: in.StartingAfter, Limit: in.Limit})
	return http.StatusOK, wire.Page(pg, jobOf, func(j sim.JobInfo) uint64 { return j.ID }), err
}

// libraryAssetJSON is an asset of any workspace, with a picture to show
// for it when there is one.
type libraryAssetJSON struct {
	wire.Asset
	WorkspaceID uint64 `json:"workspace_id"`
	Source      string `json:"source"`
	// ThumbnailURL is the image itself, or an Encore video's start frame.
	ThumbnailURL string `json:"thumbnail_url,omitempty"`
	EncoreID     uint64 `json:"encore_creation_id,omitempty"`
}

type assetsInput struct {
	page
	WorkspaceID uint64 `query:"workspace_id"`
	Kind        string `query:"kind"`
	Status      string `query:"status"`
	Query       string `query:"query"`
}

func listAllAssets(r *request, in assetsInput) (int, any, error) {
	pg, err := r.p.Eng.Library(r.workspaceFilter(in.WorkspaceID), sim.AssetQuery{Kind: in.Kind, Status: in.Status,
		Query: in.Query, StartingAfter: in.StartingAfter, Limit: in.Limit})
	v := r.view
	render := func(it sim.LibraryItem) libraryAssetJSON {
		out := libraryAssetJSON{Asset: v.Asset(it.Asset), WorkspaceID: it.WorkspaceID, Source: it.Source}
		if it.Kind == sim.KindImage && it.Status == sim.StatusCompleted {
			out.ThumbnailURL = out.URL
		}
		if it.Encore != nil {
			out.EncoreID = it.Encore.ID
			out.ThumbnailURL = v.FileURL(r.p.Eng.StartFrameFile(*it.Encore))
		}
		return out
	}
	return http.StatusOK, wire.Page(pg, render, func(it sim.LibraryItem) uint64 { return it.ID }), err
}

type publicationJSON struct {
	wire.Publication
	WorkspaceID uint64 `json:"workspace_id"`
}

type publicationsInput struct {
	page
	WorkspaceID uint64 `query:"workspace_id"`
	Status      string `query:"status"`
}

func listAllPublications(r *request, in publicationsInput) (int, any, error) {
	pg, err := r.p.Eng.AllPublications(r.workspaceFilter(in.WorkspaceID), in.Status, in.StartingAfter, in.Limit)
	render := func(p sim.Publication) publicationJSON {
		return publicationJSON{Publication: wire.PublicationOf(p), WorkspaceID: p.WorkspaceID}
	}
	return http.StatusOK, wire.Page(pg, render, func(p sim.Publication) uint64 { return p.ID }), err
}
