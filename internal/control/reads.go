package control

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// The reads across workspaces: what a person (the dashboard) or a script
// looks at while the service's API shows one workspace at a time.

// --- one workspace in detail

type workspaceDetailJSON struct {
	workspaceJSON
	MonthlyGifts []wire.Gift    `json:"monthly_gifts"`
	RateWindow   rateWindowJSON `json:"rate_window"`
	Tokens       []tokenJSON    `json:"tokens"`
	TokensHidden bool           `json:"tokens_hidden"`
	CreatedAt    string         `json:"created_at"`
}

// rateWindowJSON is the current rate-limit window, read without counting.
type rateWindowJSON struct {
	Limit     int    `json:"limit"`
	Used      int    `json:"used"`
	Remaining int    `json:"remaining"`
	ResetsAt  string `json:"resets_at"`
}

type tokenJSON struct {
	Token  string   `json:"token"`
	Masked string   `json:"masked"`
	Type   string   `json:"type"`
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
}

// mask shows a token's prefix and its last four characters (its name
// tells it from the others).
func mask(tok string) string {
	if len(tok) < 16 {
		return tok[:min(3, len(tok))] + "…"
	}
	return tok[:8] + "…" + tok[len(tok)-4:]
}

// hideTokens says whether a read leaves tokens out: on a listener beyond
// loopback without a control token, anyone who reaches the port reads the
// control API, so tokens are shown as hidden() shows them, as snapshots
// are refused. A sandbox's own control token sees its sandbox's tokens.
func (c *call) hideTokens() bool {
	return c.env.Exposed && c.env.ControlToken == "" && !c.scope.bound
}

// hidden shows a token's form and nothing of its secret: the prefix up to
// its first underscore and an ellipsis (mk_…).
func hidden(tok string) string {
	if i := strings.IndexByte(tok, '_'); i > 0 && i <= 4 {
		return tok[:i+1] + "…"
	}
	return "…"
}

func workspace(c *call) (int, any, error) {
	d, err := c.env.Eng.WorkspaceDetail(c.id())
	if err != nil {
		return 0, nil, err
	}
	out := workspaceDetailJSON{
		workspaceJSON: c.workspaceJSON(d.Workspace),
		MonthlyGifts:  []wire.Gift{}, Tokens: []tokenJSON{}, CreatedAt: d.CreatedAt.String(),
		RateWindow: rateWindowJSON{Limit: d.Rate.Limit, Used: d.Rate.Limit - d.Rate.Remaining, Remaining: d.Rate.Remaining,
			ResetsAt: sim.FormatTime(d.Rate.Reset)},
	}
	for _, g := range d.Gifts {
		out.MonthlyGifts = append(out.MonthlyGifts, wire.Gift{ModelID: g.ModelID, Remaining: g.Remaining, PerMonth: g.PerMonth, RenewsAt: sim.FormatTime(g.RenewsAt)})
	}
	out.TokensHidden = c.hideTokens()
	for _, t := range d.Tokens {
		tj := tokenJSON{Token: t.Token, Masked: mask(t.Token), Type: t.Type, Name: t.Name, Scopes: t.Scopes}
		if out.TokensHidden {
			tj.Token, tj.Masked = hidden(t.Token), hidden(t.Token)
		}
		out.Tokens = append(out.Tokens, tj)
	}
	return http.StatusOK, out, nil
}

// --- lists

// page reads the paging parameters (validated by control.json).
func (c *call) page() (startingAfter uint64, limit int) {
	q := c.r.URL.Query()
	startingAfter, _ = strconv.ParseUint(q.Get("starting_after"), 10, 64)
	limit = 50
	if l, err := strconv.Atoi(q.Get("limit")); err == nil {
		limit = l
	}
	return startingAfter, limit
}

// workspaceFilter is the workspace a cross-workspace read is narrowed to:
// the query's, or the sandbox a sandbox's token is bound to.
func (c *call) workspaceFilter() uint64 {
	if c.scope.bound {
		return c.scope.ws
	}
	ws, _ := strconv.ParseUint(c.r.URL.Query().Get("workspace_id"), 10, 64)
	return ws
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

func jobs(c *call) (int, any, error) {
	q := c.r.URL.Query()
	after, limit := c.page()
	pg, err := c.env.Eng.Jobs(sim.JobQuery{WorkspaceID: c.workspaceFilter(), Type: q.Get("kind"), Status: q.Get("status"),
		StartingAfter: after, Limit: limit})
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

func assets(c *call) (int, any, error) {
	q := c.r.URL.Query()
	after, limit := c.page()
	pg, err := c.env.Eng.Library(c.workspaceFilter(), sim.AssetQuery{Kind: q.Get("kind"), Status: q.Get("status"),
		Query: q.Get("query"), StartingAfter: after, Limit: limit})
	v := c.env.View(c.r)
	render := func(it sim.LibraryItem) libraryAssetJSON {
		out := libraryAssetJSON{Asset: v.Asset(it.Asset), WorkspaceID: it.WorkspaceID, Source: it.Source}
		if it.Kind == sim.KindImage && it.Status == sim.StatusCompleted {
			out.ThumbnailURL = out.URL
		}
		if it.Encore != nil {
			out.EncoreID = it.Encore.ID
			out.ThumbnailURL = v.FileURL(c.env.Eng.StartFrameFile(*it.Encore))
		}
		return out
	}
	return http.StatusOK, wire.Page(pg, render, func(it sim.LibraryItem) uint64 { return it.ID }), err
}

type publicationJSON struct {
	wire.Publication
	WorkspaceID uint64 `json:"workspace_id"`
}

func publications(c *call) (int, any, error) {
	after, limit := c.page()
	pg, err := c.env.Eng.AllPublications(c.workspaceFilter(), c.r.URL.Query().Get("status"), after, limit)
	render := func(p sim.Publication) publicationJSON {
		return publicationJSON{Publication: wire.PublicationOf(p), WorkspaceID: p.WorkspaceID}
	}
	return http.StatusOK, wire.Page(pg, render, func(p sim.Publication) uint64 { return p.ID }), err
}
