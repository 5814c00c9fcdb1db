package fault

import (
	"strings"

	"github.com/mediamock/mediamock/internal/evolve"
	"github.com/mediamock/mediamock/internal/seed"
)

// Evolve gives the answer what the service's next additive release may
// add (package evolve).
const Evolve = "evolve"

func init() { Register(Evolve, new(evolution)) }

type evolution struct {
	Fields  *bool `json:"fields,omitempty"`
	Enums   *bool `json:"enums,omitempty"`
	Headers *bool `json:"headers,omitempty"`
	Reorder *bool `json:"reorder,omitempty"`
}

func (k *evolution) Params() []*Param {
	part := func(field **bool, title, doc string) *Param {
		return Field(field, title, doc+"; absent or true: on, false: off. At least one part stays on.").Default(true)
	}
	return []*Param{
		part(&k.Fields, "Unknown fields", "undeclared fields in every object"),
		part(&k.Enums, "Unknown enum values", "unknown values of `status`, `kind`, `modality` and the error `code`"),
		part(&k.Headers, "Extra headers", "undeclared response headers"),
		part(&k.Reorder, "Reordered keys", "the keys of every object in another order"),
	}
}

func (*evolution) About() About {
	return About{Stage: Shape, Strikes: []string{API}, Targets: []string{TargetOperation, TargetModality, TargetProbability, TargetFirst},
		Doc: "the answer gains what the service's next additive release may add, still valid against the document with its objects and enums open: " +
			"every object an undeclared field (`fields`), one value of each of `status` (a running job's becomes `moderating`, a publication's or delivery's in flight `awaiting_review`; " +
			"a terminal status never changes), `kind` (`sticker`), `modality` (`avatar`) and the error object's `code` (a more specific code of the same HTTP status) " +
			"a value the document does not list (`enums`), undeclared headers (`headers`: `X-Service-Region`, `X-Api-Minor-Version`, `Server-Timing`) " +
			"and the keys of every object in another order (`reorder`). Drawn from the seed; the journal's `evolved` names each change. " +
			"It strikes the answers of the service's operations (class `api`), never the state: the next read of the same record evolves afresh.",
		Meets: "unknown fields, enum values and headers, keys reordered: see [the next release](../how-to/evolve.md#rehearse-the-services-next-release)"}
}

// Check keeps one part on.
func (k *evolution) Check(c *Checks) {
	if !on(k.Fields) && !on(k.Enums) && !on(k.Headers) && !on(k.Reorder) {
		c.Bad(&k.Fields, "fields, enums, headers and reorder are all false: nothing would evolve; leave one out (on) or delete the rule")
	}
}

// on reports whether a part is on: nil is.
func on(part *bool) bool { return part == nil || *part }

// Shape evolves a JSON body (and the journal's copy of it) and the
// headers; the simulation's state never sees it.
func (k *evolution) Shape(a Answer, draws *seed.RNG) []string {
	o := evolve.Options{Fields: on(k.Fields), Enums: on(k.Enums), Headers: on(k.Headers), Reorder: on(k.Reorder)}
	var changes []string
	if mt, _, _ := strings.Cut(a.Header().Get("Content-Type"), ";"); mt == "application/json" && len(a.Body()) > 0 {
		body, added := evolve.Body(a.Body(), a.Status(), o, draws)
		a.SetBody(body)
		changes = added
	}
	return append(changes, evolve.Headers(a.Header(), o, draws)...)
}

// Standing is the hit of the server's standing evolve mode (--evolve) on
// a request, every part on, drawn from the server's seed and the request's
// id; the journal names its rule "server".
func Standing(serverSeed uint64, requestID string) *Hit {
	return &Hit{Spec: Spec{Kind: Evolve}, Rule: "server", rng: seed.For(serverSeed, "fault/evolve/"+requestID, 0), kind: new(evolution), reg: lookup(Evolve)}
}
