package ops

import (
	"context"
	"net/http"
	"time"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// handlers serves each operation of openapi.json (those with a scope), by
// operationId, each with its typed input (typed). The method, path, scope,
// tool name and the rest of an operation's facts are read from the
// document (contract.Operation).
var handlers = map[string]handlerFunc{
	"getAccount":           typed(getAccount),
	"listModels":           typed(listModels),
	"createGeneration":     typed(createGeneration),
	"getGeneration":        typed(getGeneration),
	"listAssets":           typed(listAssets),
	"getAsset":             typed(getGeneration),
	"createUpload":         typed(createUpload),
	"listEncoreEffects":    typed(listEncoreEffects),
	"createEncoreCreation": typed(createEncoreCreation),
	"getEncoreCreation":    typed(getEncoreCreation),
	"listCharacters":       typed(listCharacters),
	"listBrandKits":        typed(listBrandKits),
	"listProjects":         typed(listProjects),
	"listSocialAccounts":   typed(listSocialAccounts),
	"listPublications":     typed(listPublications),
	"createPublication":    typed(createPublication),
	"getPublication":       typed(getPublication),
}

// none is the input of an operation that takes none.
type none struct{}

// byID is the input of a read of one record.
type byID struct {
	ID uint64 `path:"id"`
}

// polled is the input of a read that may wait for its job to end.
type polled struct {
	ID          uint64 `path:"id"`
	WaitSeconds int    `query:"wait_seconds"`
}

// page is the cursor of a list.
type page struct {
	StartingAfter uint64 `query:"starting_after"`
	Limit         int    `query:"limit"`
}

// limit is the page's size: 20 unless asked (openapi.json's default).
func (p page) limit() int {
	if p.Limit == 0 {
		return 20
	}
	return p.Limit
}

func getAccount(c *Call, _ none) (int, any, error) {
	a, err := c.eng().Account(c.Principal)
	return http.StatusOK, wire.AccountOf(a), err
}

type modelsQuery struct {
	Modality string `query:"modality"`
	Track    string `query:"track"`
}

func listModels(c *Call, in modelsQuery) (int, any, error) {
	modality, track := in.Modality, in.Track
	if track != "" && modality == "" {
		modality = "audio"
	}
	if track != "" && modality != "audio" {
		return 0, nil, sim.InvalidError([]sim.Violation{{In: "query", Field: "track", Reason: "track applies to the audio modality only", Allowed: []any{"audio"}}})
	}
	return http.StatusOK, wire.CatalogOf(c.eng().Models(modality, track), modality), nil
}

// generationInput is the body of POST /generations.
type generationInput struct {
	sim.GenerationRequest
	WaitSeconds int `json:"wait_seconds"`
}

func createGeneration(c *Call, body generationInput) (int, any, error) {
	g, err := c.eng().CreateGeneration(c.Ctx, c.Principal, body.GenerationRequest)
	if err != nil {
		return 0, nil, err
	}
	if body.WaitSeconds > 0 && !sim.Final(g.Status) {
		err := c.wait(body.WaitSeconds, func(ctx context.Context, d time.Duration) (err error) {
			g.Generation, err = c.eng().Generation(ctx, c.Principal, g.Assets[0].ID, d)
			return err
		})
		if err != nil {
			return 0, nil, err
		}
	}
	return http.StatusCreated, wire.GenerationCreated{Generation: c.View.Generation(g.Generation),
		CreditsCharged: g.CreditsCharged, CreditsBalance: g.CreditsBalance, CoveredByMonthlyGift: g.CoveredByGift}, nil
}

func getGeneration(c *Call, in polled) (int, any, error) {
	var g sim.Generation
	err := c.wait(in.WaitSeconds, func(ctx context.Context, d time.Duration) (err error) {
		g, err = c.eng().Generation(ctx, c.Principal, in.ID, d)
		return err
	})
	return http.StatusOK, c.View.Generation(g), err
}

// assetsQuery is the query of GET /assets.
type assetsQuery struct {
	Kind      string `query:"kind"`
	Status    string `query:"status"`
	Query     string `query:"query"`
	ProjectID uint64 `query:"project_id"`
	page
}

func listAssets(c *Call, in assetsQuery) (int, any, error) {
	return listAssetsPage(c, sim.AssetQuery{Kind: in.Kind, Status: in.Status, Query: in.Query,
		ProjectID: in.ProjectID, StartingAfter: in.StartingAfter, Limit: in.limit()})
}

func createUpload(c *Call, in uploadInput) (int, any, error) {
	up, err := in.upload()
	if err != nil {
		return 0, nil, err
	}
	a, err := c.eng().Upload(c.Ctx, c.Principal, up)
	return http.StatusCreated, c.View.Asset(a), err
}

func listEncoreEffects(c *Call, _ none) (int, any, error) {
	return http.StatusOK, wire.Whole(c.eng().EncoreEffects(), wire.EffectOf), nil
}

// encoreInput is the body of POST /encore/creations.
type encoreInput struct {
	sim.EncoreRequest
	WaitSeconds int `json:"wait_seconds"`
}

func createEncoreCreation(c *Call, body encoreInput) (int, any, error) {
	created, err := c.eng().CreateEncore(c.Ctx, c.Principal, body.EncoreRequest)
	if err != nil {
		return 0, nil, err
	}
	view := created.EncoreView
	if body.WaitSeconds > 0 {
		err := c.wait(body.WaitSeconds, func(ctx context.Context, d time.Duration) (err error) {
			view, err = c.eng().Encore(ctx, c.Principal, view.ID, d)
			return err
		})
		if err != nil {
			return 0, nil, err
		}
	}
	return http.StatusCreated, wire.EncoreCreated{Encore: c.View.Encore(view), CreditsCharged: created.CreditsCharged, CreditsBalance: created.CreditsBalance}, nil
}

func getEncoreCreation(c *Call, in polled) (int, any, error) {
	var v sim.EncoreView
	err := c.wait(in.WaitSeconds, func(ctx context.Context, d time.Duration) (err error) {
		v, err = c.eng().Encore(ctx, c.Principal, in.ID, d)
		return err
	})
	return http.StatusOK, c.View.Encore(v), err
}

func listCharacters(c *Call, _ none) (int, any, error) {
	chars, err := c.eng().Characters(c.Principal)
	return http.StatusOK, wire.Whole(chars, c.View.Character), err
}

func listBrandKits(c *Call, in page) (int, any, error) {
	pg, err := c.eng().BrandKits(c.Principal, in.StartingAfter, in.limit())
	return http.StatusOK, wire.Page(pg, wire.BrandKitOf, func(b sim.BrandKit) uint64 { return b.ID }), err
}

func listProjects(c *Call, in page) (int, any, error) {
	pg, err := c.eng().Projects(c.Principal, in.StartingAfter, in.limit())
	return http.StatusOK, wire.Page(pg, c.View.Project, func(p sim.Project) uint64 { return p.ID }), err
}

func listSocialAccounts(c *Call, _ none) (int, any, error) {
	accounts, err := c.eng().SocialAccounts(c.Principal)
	if err != nil {
		return 0, nil, err
	}
	acct, err := c.eng().Account(c.Principal)
	return http.StatusOK, wire.SocialAccountList{List: wire.Whole(accounts, wire.SocialAccountOf),
		PublishingAllowed: acct.PublishingAllowed, ConnectURL: c.eng().ConnectURL()}, err
}

// publicationsQuery is the query of GET /social/publications.
type publicationsQuery struct {
	Status string `query:"status"`
	page
}

func listPublications(c *Call, in publicationsQuery) (int, any, error) {
	pg, err := c.eng().Publications(c.Principal, in.Status, in.StartingAfter, in.limit())
	return http.StatusOK, wire.Page(pg, wire.PublicationOf, func(p sim.Publication) uint64 { return p.ID }), err
}

func createPublication(c *Call, req sim.PublicationRequest) (int, any, error) {
	pub, err := c.eng().CreatePublication(c.Principal, req)
	return http.StatusCreated, wire.PublicationOf(pub), err
}

func getPublication(c *Call, in byID) (int, any, error) {
	pub, err := c.eng().Publication(c.Principal, in.ID)
	return http.StatusOK, wire.PublicationOf(pub), err
}

// wait runs a read that may wait up to seconds for a job to end (a long
// poll). The wait ends when the client goes away, when the server shuts
// down (the poll is answered with the current state) and, except on the
// virtual clock, after the wait in wall time.
func (c *Call) wait(seconds int, read func(ctx context.Context, wait time.Duration) error) error {
	env := c.Env
	ctx, cancel := env.UntilStop(c.Ctx)
	defer cancel()
	if seconds > 0 && env.Eng.Clock().Mode() != sim.ClockVirtual {
		var cancelT context.CancelFunc
		if pk := sim.ParkOf(ctx); pk != nil && !pk.Until().IsZero() {
			// A parked poll served again keeps its first deadline.
			ctx, cancelT = context.WithDeadline(ctx, pk.Until())
		} else {
			ctx, cancelT = context.WithTimeout(ctx, time.Duration(seconds)*time.Second)
		}
		defer cancelT()
	}
	return read(ctx, time.Duration(seconds)*time.Second)
}
