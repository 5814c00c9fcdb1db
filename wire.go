package mediamock

import (
	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/sim"
)

// The JSON shapes of openapi.json. Engine records become these at the edge,
// where links are built from the public base address.

type listJSON[T any] struct {
	Object     string `json:"object"`
	Data       []T    `json:"data"`
	HasMore    bool   `json:"has_more"`
	NextCursor uint64 `json:"next_cursor,omitempty"`
}

func list[T, U any](pg sim.Page[T], conv func(T) U, id func(T) uint64) listJSON[U] {
	out := listJSON[U]{Object: "list", Data: make([]U, 0, len(pg.Data)), HasMore: pg.HasMore}
	for _, x := range pg.Data {
		out.Data = append(out.Data, conv(x))
	}
	if next, ok := sim.NextCursor(pg, id); ok {
		out.NextCursor = next
	}
	return out
}

func whole[T, U any](xs []T, conv func(T) U) listJSON[U] {
	out := listJSON[U]{Object: "list", Data: make([]U, 0, len(xs))}
	for _, x := range xs {
		out.Data = append(out.Data, conv(x))
	}
	return out
}

type assetJSON struct {
	ID              uint64       `json:"id"`
	Object          string       `json:"object"`
	Kind            string       `json:"kind"`
	Status          string       `json:"status"`
	Model           string       `json:"model,omitempty"`
	Title           string       `json:"title,omitempty"`
	Prompt          string       `json:"prompt,omitempty"`
	ProjectID       uint64       `json:"project_id,omitempty"`
	Credits         int64        `json:"credits"`
	URL             string       `json:"url,omitempty"`
	DownloadURL     string       `json:"download_url,omitempty"`
	MimeType        string       `json:"mime_type,omitempty"`
	Width           int          `json:"width,omitempty"`
	Height          int          `json:"height,omitempty"`
	DurationSeconds int          `json:"duration_seconds,omitempty"`
	Error           *sim.Problem `json:"error,omitempty"`
	CreatedAt       string       `json:"created_at"`
}

// asset renders an asset; the file's address, type, size and length are
// shown once it is completed.
func (c *call) asset(a sim.Asset) assetJSON {
	out := assetJSON{ID: a.ID, Object: "asset", Kind: a.Kind, Status: a.Status, Model: a.Model, Title: a.Title,
		Prompt: a.Prompt, ProjectID: a.ProjectID, Credits: a.Credits, Error: a.Error, CreatedAt: a.CreatedAt.String()}
	if a.Status == sim.StatusCompleted {
		out.URL = c.fileURL(c.s.eng.AssetFile(a))
		out.DownloadURL = out.URL + "?download=1"
		out.MimeType, out.Width, out.Height, out.DurationSeconds = a.MimeType, a.Width, a.Height, a.DurationSeconds
	}
	return out
}

type generationJSON struct {
	Object string      `json:"object"`
	Status string      `json:"status"`
	Assets []assetJSON `json:"assets"`
}

func (c *call) generation(g sim.Generation) generationJSON {
	out := generationJSON{Object: "generation", Status: g.Status, Assets: make([]assetJSON, 0, len(g.Assets))}
	for _, a := range g.Assets {
		out.Assets = append(out.Assets, c.asset(a))
	}
	return out
}

type generationCreatedJSON struct {
	generationJSON
	CreditsCharged       int64 `json:"credits_charged"`
	CreditsBalance       int64 `json:"credits_balance"`
	CoveredByMonthlyGift bool  `json:"covered_by_monthly_gift"`
}

type accountJSON struct {
	Object             string     `json:"object"`
	WorkspaceID        uint64     `json:"workspace_id"`
	WorkspaceName      string     `json:"workspace_name"`
	Plan               string     `json:"plan"`
	CreditsBalance     int64      `json:"credits_balance"`
	RateLimitPerMinute int        `json:"rate_limit_per_minute"`
	Scopes             []string   `json:"scopes"`
	TokenType          string     `json:"token_type"`
	PublishingAllowed  bool       `json:"publishing_allowed"`
	MonthlyGifts       []giftJSON `json:"monthly_gifts"`
}

type giftJSON struct {
	ModelID   string `json:"model_id"`
	Remaining int    `json:"remaining"`
	PerMonth  int    `json:"per_month"`
	RenewsAt  string `json:"renews_at"`
}

func accountOf(a sim.Account) accountJSON {
	out := accountJSON{Object: "account", WorkspaceID: a.WorkspaceID, WorkspaceName: a.WorkspaceName, Plan: a.Plan,
		CreditsBalance: a.Balance, RateLimitPerMinute: a.RateLimit, Scopes: a.Scopes, TokenType: a.TokenType,
		PublishingAllowed: a.PublishingAllowed, MonthlyGifts: []giftJSON{}}
	for _, g := range a.Gifts {
		out.MonthlyGifts = append(out.MonthlyGifts, giftJSON{ModelID: g.ModelID, Remaining: g.Remaining, PerMonth: g.PerMonth, RenewsAt: sim.FormatTime(g.RenewsAt)})
	}
	return out
}

type modelJSON struct {
	ID                     string                 `json:"id"`
	Object                 string                 `json:"object"`
	Name                   string                 `json:"name"`
	Description            string                 `json:"description,omitempty"`
	Modality               string                 `json:"modality"`
	Track                  string                 `json:"track,omitempty"`
	CreditsPerOutput       int                    `json:"credits_per_output"`
	RequiresReferenceImage bool                   `json:"requires_reference_image"`
	MaxReferenceImages     int                    `json:"max_reference_images"`
	OutputMimeType         string                 `json:"output_mime_type"`
	Options                fixtures.ModelOptions  `json:"options"`
	Defaults               fixtures.ModelDefaults `json:"defaults"`
}

func modelOf(m fixtures.Model) modelJSON {
	return modelJSON{ID: m.ID, Object: "model", Name: m.Name, Description: m.Description, Modality: m.Modality, Track: m.Track,
		CreditsPerOutput: m.CreditsPerOutput, RequiresReferenceImage: m.RequiresReferenceImage, MaxReferenceImages: m.MaxReferenceImages,
		OutputMimeType: m.OutputMimeType, Options: m.Options, Defaults: m.Defaults}
}

type catalogJSON struct {
	Object     string                 `json:"object"`
	Modalities map[string][]modelJSON `json:"modalities"`
}

type effectJSON struct {
	Slug            string `json:"slug"`
	Object          string `json:"object"`
	Name            string `json:"name"`
	Tagline         string `json:"tagline"`
	Credits         int    `json:"credits"`
	DurationSeconds int    `json:"duration_seconds"`
	AspectRatio     string `json:"aspect_ratio"`
	AppURL          string `json:"app_url"`
}

func effectOf(e sim.EncoreEffect) effectJSON {
	return effectJSON{Slug: e.Slug, Object: "encore_effect", Name: e.Name, Tagline: e.Tagline, Credits: e.Credits,
		DurationSeconds: e.DurationSeconds, AspectRatio: "9:16", AppURL: e.AppURL}
}

type encoreVideoJSON struct {
	ID              uint64 `json:"id"`
	Object          string `json:"object"`
	Kind            string `json:"kind"`
	Status          string `json:"status"`
	URL             string `json:"url"`
	DownloadURL     string `json:"download_url"`
	MimeType        string `json:"mime_type"`
	DurationSeconds int    `json:"duration_seconds"`
	Width           int    `json:"width"`
	Height          int    `json:"height"`
}

type encoreJSON struct {
	ID            uint64           `json:"id"`
	Object        string           `json:"object"`
	Effect        string           `json:"effect"`
	Status        string           `json:"status"`
	AssetID       uint64           `json:"asset_id"`
	StartFrameURL string           `json:"start_frame_url"`
	Video         *encoreVideoJSON `json:"video,omitempty"`
	ShareURL      string           `json:"share_url,omitempty"`
	Credits       int64            `json:"credits"`
	Error         *sim.Problem     `json:"error,omitempty"`
	CreatedAt     string           `json:"created_at"`
}

func (c *call) encore(v sim.EncoreView) encoreJSON {
	out := encoreJSON{ID: v.ID, Object: "encore_creation", Effect: v.Effect, Status: v.Status, AssetID: v.AssetID,
		StartFrameURL: c.fileURL(c.s.eng.StartFrameFile(v.EncoreCreation)), Credits: v.Credits, Error: v.Error,
		CreatedAt: v.CreatedAt.String()}
	if v.Status == sim.StatusCompleted {
		a := c.asset(v.Video)
		out.Video = &encoreVideoJSON{ID: a.ID, Object: "asset", Kind: a.Kind, Status: a.Status, URL: a.URL, DownloadURL: a.DownloadURL,
			MimeType: a.MimeType, DurationSeconds: a.DurationSeconds, Width: a.Width, Height: a.Height}
		out.ShareURL = c.s.eng.ShareURL(v.EncoreCreation)
	}
	return out
}

type encoreCreatedJSON struct {
	encoreJSON
	CreditsCharged int64 `json:"credits_charged"`
	CreditsBalance int64 `json:"credits_balance"`
}

type characterJSON struct {
	ID          uint64 `json:"id"`
	Object      string `json:"object"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Status      string `json:"status"`
	ImageURL    string `json:"image_url"`
	CreatedAt   string `json:"created_at"`
}

func (c *call) character(ch sim.Character) characterJSON {
	return characterJSON{ID: ch.ID, Object: "character", Name: ch.Name, Description: ch.Description, Status: ch.Status,
		ImageURL: c.fileURL(c.s.eng.CharacterFile(ch)), CreatedAt: ch.CreatedAt.String()}
}

type brandKitJSON struct {
	ID             uint64         `json:"id"`
	Object         string         `json:"object"`
	Name           string         `json:"name"`
	Niche          string         `json:"niche"`
	Tone           string         `json:"tone"`
	TargetAudience string         `json:"target_audience"`
	Instructions   string         `json:"instructions"`
	Colors         []string       `json:"colors"`
	Fonts          fixtures.Fonts `json:"fonts"`
	CreatedAt      string         `json:"created_at"`
}

func brandKitOf(b sim.BrandKit) brandKitJSON {
	return brandKitJSON{ID: b.ID, Object: "brand_kit", Name: b.Name, Niche: b.Niche, Tone: b.Tone, TargetAudience: b.TargetAudience,
		Instructions: b.Instructions, Colors: b.Colors, Fonts: b.Fonts, CreatedAt: b.CreatedAt.String()}
}

type projectJSON struct {
	ID        uint64 `json:"id"`
	Object    string `json:"object"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	URL       string `json:"url"`
	CreatedAt string `json:"created_at"`
}

type socialAccountJSON struct {
	ID             uint64 `json:"id"`
	Object         string `json:"object"`
	Platform       string `json:"platform"`
	Name           string `json:"name"`
	Handle         string `json:"handle"`
	Publishable    bool   `json:"publishable"`
	SupportsImages bool   `json:"supports_images"`
}

func socialAccountOf(a sim.SocialAccount) socialAccountJSON {
	return socialAccountJSON{ID: a.ID, Object: "social_account", Platform: a.Platform, Name: a.Name, Handle: a.Handle,
		Publishable: a.Publishable, SupportsImages: a.SupportsImages}
}

type socialAccountListJSON struct {
	listJSON[socialAccountJSON]
	PublishingAllowed bool   `json:"publishing_allowed"`
	ConnectURL        string `json:"connect_url"`
}

type deliveryJSON struct {
	SocialAccountID uint64       `json:"social_account_id"`
	Platform        string       `json:"platform"`
	Handle          string       `json:"handle"`
	Status          string       `json:"status"`
	PostURL         string       `json:"post_url,omitempty"`
	PublishedAt     string       `json:"published_at,omitempty"`
	Error           *sim.Problem `json:"error,omitempty"`
}

type publicationJSON struct {
	ID          uint64                  `json:"id"`
	Object      string                  `json:"object"`
	Status      string                  `json:"status"`
	Caption     string                  `json:"caption"`
	AssetIDs    []uint64                `json:"asset_ids"`
	MediaType   string                  `json:"media_type"`
	Options     *sim.PublicationOptions `json:"options,omitempty"`
	ScheduledAt string                  `json:"scheduled_at,omitempty"`
	PublishedAt string                  `json:"published_at,omitempty"`
	Deliveries  []deliveryJSON          `json:"deliveries"`
	CreatedAt   string                  `json:"created_at"`
}

func stamp(s sim.Stamp) string {
	if s.IsZero() {
		return ""
	}
	return s.String()
}

func publicationOf(p sim.Publication) publicationJSON {
	out := publicationJSON{ID: p.ID, Object: "publication", Status: p.Status, Caption: p.Caption, AssetIDs: p.AssetIDs,
		MediaType: p.MediaType, Options: p.Options, ScheduledAt: stamp(p.ScheduledAt), PublishedAt: stamp(p.PublishedAt),
		Deliveries: make([]deliveryJSON, 0, len(p.Deliveries)), CreatedAt: p.CreatedAt.String()}
	for _, d := range p.Deliveries {
		out.Deliveries = append(out.Deliveries, deliveryJSON{SocialAccountID: d.SocialAccountID, Platform: d.Platform, Handle: d.Handle,
			Status: d.Status, PostURL: d.PostURL, PublishedAt: stamp(d.PublishedAt), Error: d.Error})
	}
	return out
}
