package ops

import (
	"context"
	"net/http"
	"time"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// handlers serves each operation of openapi.json (those with a scope), by
// operationId. The method, path, scope, tool name and the rest of an
// operation's facts are read from the document (contract.Operation).
var handlers = map[string]handlerFunc{
	"getAccount":           getAccount,
	"listModels":           listModels,
	"createGeneration":     createGeneration,
	"getGeneration":        getGeneration,
	"listAssets":           listAssets,
	"getAsset":             getGeneration,
	"createUpload":         createUpload,
	"listEncoreEffects":    listEncoreEffects,
	"createEncoreCreation": createEncoreCreation,
	"getEncoreCreation":    getEncoreCreation,
	"listCharacters":       listCharacters,
	"listBrandKits":        listBrandKits,
	"listProjects":         listProjects,
	"listSocialAccounts":   listSocialAccounts,
	"listPublications":     listPublications,
	"createPublication":    createPublication,
	"getPublication":       getPublication,
}

func getAccount(c *Call) (int, any, error) {
	a, err := c.eng().Account(c.Principal)
	return http.StatusOK, wire.AccountOf(a), err
}

func listModels(c *Call) (int, any, error) {
	modality, track := c.query("modality"), c.query("track")
	if track != "" && modality == "" {
		modality = "audio"
	}
	if track != "" && modality != "audio" {
		return 0, nil, sim.InvalidError([]sim.Violation{{In: "query", Field: "track", Reason: "track applies to the audio modality only", Allowed: []any{"audio"}}})
	}
	return http.StatusOK, wire.CatalogOf(c.eng().Models(modality, track), modality), nil
}

type generationBody struct {
	sim.GenerationRequest
	WaitSeconds int `json:"wait_seconds"`
}

func createGeneration(c *Call) (int, any, error) {
	var body generationBody
	if err := c.decode(&body); err != nil {
		return 0, nil, err
	}
	g, err := c.eng().CreateGeneration(c.Request.Context(), c.Principal, body.GenerationRequest)
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

func getGeneration(c *Call) (int, any, error) {
	var g sim.Generation
	err := c.wait(c.queryInt("wait_seconds", 0), func(ctx context.Context, d time.Duration) (err error) {
		g, err = c.eng().Generation(ctx, c.Principal, c.id(), d)
		return err
	})
	return http.StatusOK, c.View.Generation(g), err
}

func listAssets(c *Call) (int, any, error) {
	return listAssetsPage(c, sim.AssetQuery{
		Kind: c.query("kind"), Status: c.query("status"), Query: c.query("query"),
		ProjectID: uint64(c.queryInt("project_id", 0)), StartingAfter: uint64(c.queryInt("starting_after", 0)),
		Limit: c.queryInt("limit", 20),
	})
}

func createUpload(c *Call) (int, any, error) {
	in, err := c.uploadInput()
	if err != nil {
		return 0, nil, err
	}
	// The form is read: let its bytes go while the file is stored.
	c.Request.Body, c.Request.GetBody = http.NoBody, nil
	a, err := c.eng().Upload(c.Request.Context(), c.Principal, in)
	return http.StatusCreated, c.View.Asset(a), err
}

func listEncoreEffects(c *Call) (int, any, error) {
	return http.StatusOK, wire.Whole(c.eng().EncoreEffects(), wire.EffectOf), nil
}

type encoreBody struct {
	sim.EncoreRequest
	WaitSeconds int `json:"wait_seconds"`
}

func createEncoreCreation(c *Call) (int, any, error) {
	var body encoreBody
	if err := c.decode(&body); err != nil {
		return 0, nil, err
	}
	created, err := c.eng().CreateEncore(c.Request.Context(), c.Principal, body.EncoreRequest)
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

func getEncoreCreation(c *Call) (int, any, error) {
	var v sim.EncoreView
	err := c.wait(c.queryInt("wait_seconds", 0), func(ctx context.Context, d time.Duration) (err error) {
		v, err = c.eng().Encore(ctx, c.Principal, c.id(), d)
		return err
	})
	return http.StatusOK, c.View.Encore(v), err
}

func listCharacters(c *Call) (int, any, error) {
	chars, err := c.eng().Characters(c.Principal)
	return http.StatusOK, wire.Whole(chars, c.View.Character), err
}

func listBrandKits(c *Call) (int, any, error) {
	pg, err := c.eng().BrandKits(c.Principal, uint64(c.queryInt("starting_after", 0)), c.queryInt("limit", 20))
	return http.StatusOK, wire.Page(pg, wire.BrandKitOf, func(b sim.BrandKit) uint64 { return b.ID }), err
}

func listProjects(c *Call) (int, any, error) {
	pg, err := c.eng().Projects(c.Principal, uint64(c.queryInt("starting_after", 0)), c.queryInt("limit", 20))
	return http.StatusOK, wire.Page(pg, c.View.Project, func(p sim.Project) uint64 { return p.ID }), err
}

func listSocialAccounts(c *Call) (int, any, error) {
	accounts, err := c.eng().SocialAccounts(c.Principal)
	if err != nil {
		return 0, nil, err
	}
	acct, err := c.eng().Account(c.Principal)
	return http.StatusOK, wire.SocialAccountList{List: wire.Whole(accounts, wire.SocialAccountOf),
		PublishingAllowed: acct.PublishingAllowed, ConnectURL: c.eng().ConnectURL()}, err
}

func listPublications(c *Call) (int, any, error) {
	pg, err := c.eng().Publications(c.Principal, c.query("status"), uint64(c.queryInt("starting_after", 0)), c.queryInt("limit", 20))
	return http.StatusOK, wire.Page(pg, wire.PublicationOf, func(p sim.Publication) uint64 { return p.ID }), err
}

func createPublication(c *Call) (int, any, error) {
	var req sim.PublicationRequest
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	pub, err := c.eng().CreatePublication(c.Principal, req)
	return http.StatusCreated, wire.PublicationOf(pub), err
}

func getPublication(c *Call) (int, any, error) {
	pub, err := c.eng().Publication(c.Principal, c.id())
	return http.StatusOK, wire.PublicationOf(pub), err
}

// wait runs a read that may wait up to seconds for a job to end (a long
// poll). The wait ends when the client goes away, when the server shuts
// down (the poll is answered with the current state) and, except on the
// virtual clock, after the wait in wall time.
func (c *Call) wait(seconds int, read func(ctx context.Context, wait time.Duration) error) error {
	env := c.Env
	ctx, cancel := env.UntilStop(c.Request.Context())
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
