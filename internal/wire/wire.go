// Package wire owns the JSON shapes of openapi.json. Engine records become
// these at the edge of every front, with links built from the public base
// address; a field reaches the wire only when this package says so.
package wire

import (
	"strings"

	"github.com/mediamock/mediamock/fixtures"
	"github.com/mediamock/mediamock/sim"
)

// View renders engine records: Base is the public address links are built
// from (scheme and host, no trailing slash).
type View struct {
	Base string
	Eng  *sim.Engine
	// Sign, when set, gives the query a file's address carries ("" for
	// none): an expiry and its signature, while a fault makes file
	// addresses expire.
	Sign func(sim.FileRef) string
}

// FileURL is the public address of a stored file.
func (v View) FileURL(ref sim.FileRef) string {
	u := v.Base + FilesPath + ref.Path()
	if v.Sign != nil {
		u += v.Sign(ref)
	}
	return u
}

// querySep is what joins one more query parameter to an address.
func querySep(u string) string {
	if strings.Contains(u, "?") {
		return "&"
	}
	return "?"
}

// BasePath is the REST base path of the service: {base_url} is a server's
// address and this.
const BasePath = "/api/v1"

// FilesPath is where generated and uploaded files are served, outside the
// API's base path, like a CDN.
const FilesPath = "/files/"

// List is the list envelope.
type List[T any] struct {
	Object     string `json:"object"`
	Data       []T    `json:"data"`
	HasMore    bool   `json:"has_more"`
	NextCursor uint64 `json:"next_cursor,omitempty"`
}

// Page renders a page of a paginated list.
func Page[T, U any](pg sim.Page[T], conv func(T) U, id func(T) uint64) List[U] {
	out := List[U]{Object: "list", Data: make([]U, 0, len(pg.Data)), HasMore: pg.HasMore}
	for _, x := range pg.Data {
		out.Data = append(out.Data, conv(x))
	}
	if next, ok := sim.NextCursor(pg, id); ok {
		out.NextCursor = next
	}
	return out
}

// Whole renders a list that does not paginate.
func Whole[T, U any](xs []T, conv func(T) U) List[U] {
	out := List[U]{Object: "list", Data: make([]U, 0, len(xs))}
	for _, x := range xs {
		out.Data = append(out.Data, conv(x))
	}
	return out
}

// Asset is the spec's Asset: a file of the library, generated, uploaded or
// made by Encore.
type Asset struct {
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

// Asset renders an asset; the file's address, type, size and length are
// shown once it is completed.
func (v View) Asset(a sim.Asset) Asset {
	out := Asset{ID: a.ID, Object: "asset", Kind: a.Kind, Status: a.Status, Model: a.Model, Title: a.Title,
		Prompt: a.Prompt, ProjectID: a.ProjectID, Credits: a.Credits, Error: a.Error, CreatedAt: a.CreatedAt.String()}
	if a.Status == sim.StatusCompleted {
		out.URL = v.FileURL(v.Eng.AssetFile(a))
		out.DownloadURL = out.URL + querySep(out.URL) + "download=1"
		out.MimeType, out.Width, out.Height, out.DurationSeconds = a.MimeType, a.Width, a.Height, a.DurationSeconds
	}
	return out
}

// Generation is the read response of a generation: its status and assets.
type Generation struct {
	Object string  `json:"object"`
	Status string  `json:"status"`
	Assets []Asset `json:"assets"`
}

// Generation renders a generation read response.
func (v View) Generation(g sim.Generation) Generation {
	out := Generation{Object: "generation", Status: g.Status, Assets: make([]Asset, 0, len(g.Assets))}
	for _, a := range g.Assets {
		out.Assets = append(out.Assets, v.Asset(a))
	}
	return out
}

// GenerationCreated is the create response of POST /generations: the
// generation with what it cost and the balance after.
type GenerationCreated struct {
	Generation
	CreditsCharged       int64 `json:"credits_charged"`
	CreditsBalance       int64 `json:"credits_balance"`
	CoveredByMonthlyGift bool  `json:"covered_by_monthly_gift"`
}

// Account is GET /account: the workspace, its plan, credits, rate limit,
// scopes and monthly gifts (field names decided where the spec says "not
// shown", listed in docs/reference/decisions.md).
type Account struct {
	Object             string   `json:"object"`
	WorkspaceID        uint64   `json:"workspace_id"`
	WorkspaceName      string   `json:"workspace_name"`
	Plan               string   `json:"plan"`
	CreditsBalance     int64    `json:"credits_balance"`
	RateLimitPerMinute int      `json:"rate_limit_per_minute"`
	Scopes             []string `json:"scopes"`
	TokenType          string   `json:"token_type"`
	PublishingAllowed  bool     `json:"publishing_allowed"`
	MonthlyGifts       []Gift   `json:"monthly_gifts"`
}

// Gift is a monthly gift of an account: free generations of one model.
type Gift struct {
	ModelID   string `json:"model_id"`
	Remaining int    `json:"remaining"`
	PerMonth  int    `json:"per_month"`
	RenewsAt  string `json:"renews_at"`
}

// AccountOf renders the engine's account.
func AccountOf(a sim.Account) Account {
	out := Account{Object: "account", WorkspaceID: a.WorkspaceID, WorkspaceName: a.WorkspaceName, Plan: a.Plan,
		CreditsBalance: a.Balance, RateLimitPerMinute: a.RateLimit, Scopes: a.Scopes, TokenType: a.TokenType,
		PublishingAllowed: a.PublishingAllowed, MonthlyGifts: []Gift{}}
	for _, g := range a.Gifts {
		out.MonthlyGifts = append(out.MonthlyGifts, Gift{ModelID: g.ModelID, Remaining: g.Remaining, PerMonth: g.PerMonth, RenewsAt: sim.FormatTime(g.RenewsAt)})
	}
	return out
}

// Model is one model of the catalog, with its price and valid options.
type Model struct {
	ID                     string        `json:"id"`
	Object                 string        `json:"object"`
	Name                   string        `json:"name"`
	Description            string        `json:"description,omitempty"`
	Modality               string        `json:"modality"`
	Track                  string        `json:"track,omitempty"`
	CreditsPerOutput       int           `json:"credits_per_output"`
	RequiresReferenceImage bool          `json:"requires_reference_image"`
	MaxReferenceImages     int           `json:"max_reference_images"`
	OutputMimeType         string        `json:"output_mime_type"`
	Options                ModelOptions  `json:"options"`
	Defaults               ModelDefaults `json:"defaults"`
}

// ModelOf renders a catalog model.
func ModelOf(m fixtures.Model) Model {
	return Model{ID: m.ID, Object: "model", Name: m.Name, Description: m.Description, Modality: m.Modality, Track: m.Track,
		CreditsPerOutput: m.CreditsPerOutput, RequiresReferenceImage: m.RequiresReferenceImage, MaxReferenceImages: m.MaxReferenceImages,
		OutputMimeType: m.OutputMimeType, Options: optionsOf(m.Options), Defaults: ModelDefaults(m.Defaults)}
}

// ModelOptions are a model's valid options.
type ModelOptions struct {
	AspectRatios []string `json:"aspect_ratios,omitempty"`
	Resolutions  []string `json:"resolutions,omitempty"`
	Durations    []int    `json:"durations,omitempty"`
	Voices       []Voice  `json:"voices,omitempty"`
	Languages    []string `json:"languages,omitempty"`
	NativeAudio  bool     `json:"native_audio,omitempty"`
	MaxCount     int      `json:"max_count,omitempty"`
}

// Voice is a text-to-speech voice.
type Voice struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Languages []string `json:"languages,omitempty"`
}

// ModelDefaults are the options a model uses when the request leaves them out.
type ModelDefaults struct {
	AspectRatio string `json:"aspect_ratio,omitempty"`
	Resolution  string `json:"resolution,omitempty"`
	Duration    int    `json:"duration,omitempty"`
	Voice       string `json:"voice,omitempty"`
	Language    string `json:"language,omitempty"`
}

func optionsOf(o fixtures.ModelOptions) ModelOptions {
	out := ModelOptions{AspectRatios: o.AspectRatios, Resolutions: o.Resolutions, Durations: o.Durations,
		Languages: o.Languages, NativeAudio: o.NativeAudio, MaxCount: o.MaxCount}
	for _, v := range o.Voices {
		out.Voices = append(out.Voices, Voice{ID: v.ID, Name: v.Name, Languages: v.Languages})
	}
	return out
}

// Catalog is GET /models: the models grouped by modality.
type Catalog struct {
	Object     string             `json:"object"`
	Modalities map[string][]Model `json:"modalities"`
}

// Effect is the spec's Encore effect.
type Effect struct {
	Slug            string `json:"slug"`
	Object          string `json:"object"`
	Name            string `json:"name"`
	Tagline         string `json:"tagline"`
	Credits         int    `json:"credits"`
	DurationSeconds int    `json:"duration_seconds"`
	AspectRatio     string `json:"aspect_ratio"`
	AppURL          string `json:"app_url"`
}

// EffectOf renders an Encore effect of the catalog.
func EffectOf(e sim.EncoreEffect) Effect {
	return Effect{Slug: e.Slug, Object: "encore_effect", Name: e.Name, Tagline: e.Tagline, Credits: e.Credits,
		DurationSeconds: e.DurationSeconds, AspectRatio: "9:16", AppURL: e.AppURL}
}

// EncoreVideo is the asset-like video of an Encore creation, once ready.
type EncoreVideo struct {
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

// Encore is the spec's Encore creation.
type Encore struct {
	ID            uint64       `json:"id"`
	Object        string       `json:"object"`
	Effect        string       `json:"effect"`
	Status        string       `json:"status"`
	AssetID       uint64       `json:"asset_id"`
	StartFrameURL string       `json:"start_frame_url"`
	Video         *EncoreVideo `json:"video,omitempty"`
	ShareURL      string       `json:"share_url,omitempty"`
	Credits       int64        `json:"credits"`
	Error         *sim.Problem `json:"error,omitempty"`
	CreatedAt     string       `json:"created_at"`
}

// Encore renders an Encore creation.
func (v View) Encore(c sim.EncoreView) Encore {
	out := Encore{ID: c.ID, Object: "encore_creation", Effect: c.Effect, Status: c.Status, AssetID: c.AssetID,
		StartFrameURL: v.FileURL(v.Eng.StartFrameFile(c.EncoreCreation)), Credits: c.Credits, Error: c.Error,
		CreatedAt: c.CreatedAt.String()}
	if c.Status == sim.StatusCompleted {
		a := v.Asset(c.Video)
		out.Video = &EncoreVideo{ID: a.ID, Object: "asset", Kind: a.Kind, Status: a.Status, URL: a.URL, DownloadURL: a.DownloadURL,
			MimeType: a.MimeType, DurationSeconds: a.DurationSeconds, Width: a.Width, Height: a.Height}
		out.ShareURL = v.Eng.ShareURL(c.EncoreCreation)
	}
	return out
}

// EncoreCreated is the create response of POST /encore/creations: the
// creation with what it cost and the balance after.
type EncoreCreated struct {
	Encore
	CreditsCharged int64 `json:"credits_charged"`
	CreditsBalance int64 `json:"credits_balance"`
}

// Character is a ready character of the workspace.
type Character struct {
	ID          uint64 `json:"id"`
	Object      string `json:"object"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Status      string `json:"status"`
	ImageURL    string `json:"image_url"`
	CreatedAt   string `json:"created_at"`
}

// Character renders a character.
func (v View) Character(ch sim.Character) Character {
	return Character{ID: ch.ID, Object: "character", Name: ch.Name, Description: ch.Description, Status: ch.Status,
		ImageURL: v.FileURL(v.Eng.CharacterFile(ch)), CreatedAt: ch.CreatedAt.String()}
}

// BrandKit is the spec's brand kit.
type BrandKit struct {
	ID             uint64   `json:"id"`
	Object         string   `json:"object"`
	Name           string   `json:"name"`
	Niche          string   `json:"niche"`
	Tone           string   `json:"tone"`
	TargetAudience string   `json:"target_audience"`
	Instructions   string   `json:"instructions"`
	Colors         []string `json:"colors"`
	Fonts          Fonts    `json:"fonts"`
	CreatedAt      string   `json:"created_at"`
}

// BrandKitOf renders a brand kit.
func BrandKitOf(b sim.BrandKit) BrandKit {
	return BrandKit{ID: b.ID, Object: "brand_kit", Name: b.Name, Niche: b.Niche, Tone: b.Tone, TargetAudience: b.TargetAudience,
		Instructions: b.Instructions, Colors: b.Colors, Fonts: Fonts{Heading: b.Fonts.Heading, Body: b.Fonts.Body}, CreatedAt: b.CreatedAt.String()}
}

// Fonts are a brand kit's typefaces.
type Fonts struct {
	Heading string `json:"heading"`
	Body    string `json:"body"`
}

// Project is a project of the workspace, with its status and link.
type Project struct {
	ID        uint64 `json:"id"`
	Object    string `json:"object"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	URL       string `json:"url"`
	CreatedAt string `json:"created_at"`
}

// SocialAccount is the spec's social account.
type SocialAccount struct {
	ID             uint64 `json:"id"`
	Object         string `json:"object"`
	Platform       string `json:"platform"`
	Name           string `json:"name"`
	Handle         string `json:"handle"`
	Publishable    bool   `json:"publishable"`
	SupportsImages bool   `json:"supports_images"`
}

// SocialAccountOf renders a connected social account.
func SocialAccountOf(a sim.SocialAccount) SocialAccount {
	return SocialAccount{ID: a.ID, Object: "social_account", Platform: a.Platform, Name: a.Name, Handle: a.Handle,
		Publishable: a.Publishable, SupportsImages: a.SupportsImages}
}

// SocialAccountList is GET /social/accounts: the accounts, whether the plan
// allows publishing, and where accounts are connected.
type SocialAccountList struct {
	List[SocialAccount]
	PublishingAllowed bool   `json:"publishing_allowed"`
	ConnectURL        string `json:"connect_url"`
}

// Delivery is a publication's delivery to one account: its status and, once
// posted, the post's URL.
type Delivery struct {
	SocialAccountID uint64       `json:"social_account_id"`
	Platform        string       `json:"platform"`
	Handle          string       `json:"handle"`
	Status          string       `json:"status"`
	PostURL         string       `json:"post_url,omitempty"`
	PublishedAt     string       `json:"published_at,omitempty"`
	Error           *sim.Problem `json:"error,omitempty"`
}

// Publication is a publication with its overall status and its deliveries.
type Publication struct {
	ID          uint64                  `json:"id"`
	Object      string                  `json:"object"`
	Status      string                  `json:"status"`
	Caption     string                  `json:"caption"`
	AssetIDs    []uint64                `json:"asset_ids"`
	MediaType   string                  `json:"media_type"`
	Options     *sim.PublicationOptions `json:"options,omitempty"`
	ScheduledAt string                  `json:"scheduled_at,omitempty"`
	PublishedAt string                  `json:"published_at,omitempty"`
	Deliveries  []Delivery              `json:"deliveries"`
	CreatedAt   string                  `json:"created_at"`
}

func stamp(s sim.Stamp) string {
	if s.IsZero() {
		return ""
	}
	return s.String()
}

// PublicationOf renders a publication.
func PublicationOf(p sim.Publication) Publication {
	out := Publication{ID: p.ID, Object: "publication", Status: p.Status, Caption: p.Caption, AssetIDs: p.AssetIDs,
		MediaType: p.MediaType, Options: p.Options, ScheduledAt: stamp(p.ScheduledAt), PublishedAt: stamp(p.PublishedAt),
		Deliveries: make([]Delivery, 0, len(p.Deliveries)), CreatedAt: p.CreatedAt.String()}
	for _, d := range p.Deliveries {
		out.Deliveries = append(out.Deliveries, Delivery{SocialAccountID: d.SocialAccountID, Platform: d.Platform, Handle: d.Handle,
			Status: d.Status, PostURL: d.PostURL, PublishedAt: stamp(d.PublishedAt), Error: d.Error})
	}
	return out
}

// Project renders a project.
func (v View) Project(p sim.Project) Project {
	return Project{ID: p.ID, Object: "project", Name: p.Name, Status: p.Status, URL: v.Eng.ProjectURL(p.ID), CreatedAt: p.CreatedAt.String()}
}

// CatalogOf groups models by modality: every modality of the catalog, or
// only the one asked for, even when it has no model.
func CatalogOf(models []fixtures.Model, only string) Catalog {
	groups := map[string][]Model{}
	for _, m := range fixtures.Modalities {
		if only == "" || only == m.Name {
			groups[m.Name] = []Model{}
		}
	}
	for _, m := range models {
		groups[m.Modality] = append(groups[m.Modality], ModelOf(m))
	}
	return Catalog{Object: "model_catalog", Modalities: groups}
}
