package fault

// Status answers 429, 500 or 503 in the spec's error object, before the
// operation runs.
const Status = "status"

// ViaResponses names the shorthand POST /faults/responses: a status rule
// spent after count requests.
const ViaResponses = "responses"

func init() { Register(Status, new(status)) }

type status struct {
	Status int `json:"status,omitempty"`
}

func (k *status) Params() []*Param {
	return []*Param{Field(&k.Status, "Status", "the status to answer.").Enum(429, 500, 503).Required()}
}

func (*status) About() About {
	return About{Stage: Admit, Strikes: Classes, Targets: Targets,
		Doc: "a 429, 500 or 503 in the error object, after authentication, the rate window and the scope, before the operation runs (nothing changes); `POST /faults/responses` makes one spent after `count` hits.",
		Meets: "429, 500 or 503 in the error object; the operation does not run (a 429 carries `Retry-After` to the window's reset and " +
			"`X-RateLimit-Remaining: 0`)",
		Shorthands: []Shorthand{{Via: ViaResponses, Endpoint: "POST /faults/responses",
			Doc: "a `" + Status + "` rule spent after `count` requests (`forced_responses`)"}}}
}

// Admit forces the status.
func (k *status) Admit(a Admission) error { return a.Forced(k.Status) }
