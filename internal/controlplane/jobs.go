package controlplane

import (
	"net/http"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// jobInput names a job by what clients know it by (its first asset's id,
// or its Encore creation's) and says what to do with it.
type jobInput struct {
	ID     uint64 `path:"id"`
	Action string `path:"action"`
	Body   struct {
		Code string `json:"code"`
	} `body:""`
}

// controlAsset and controlEncore act on the job of an asset or an Encore
// creation and render it as the service does.
func controlAsset(r *request, in jobInput) (int, any, error) {
	g, err := r.p.Eng.ControlAsset(in.ID, sim.JobAction(in.Action), in.Body.Code)
	return http.StatusOK, r.view.Generation(g), err
}

func controlEncore(r *request, in jobInput) (int, any, error) {
	v, err := r.p.Eng.ControlEncore(in.ID, sim.JobAction(in.Action), in.Body.Code)
	return http.StatusOK, r.view.Encore(v), err
}

type idInput struct {
	ID uint64 `path:"id"`
}

func cancelPublication(r *request, in idInput) (int, any, error) {
	p, err := r.p.Eng.CancelPublicationAny(in.ID)
	return http.StatusOK, wire.PublicationOf(p), err
}
