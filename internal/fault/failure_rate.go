package fault

// FailureRate is the share of jobs that fail, instead of each model's
// rate.
const FailureRate = "failure_rate"

// ViaFailureRate names the shorthand PUT /faults/failure-rate: the
// scope's one rule of the kind.
const ViaFailureRate = "failure-rate"

func init() { Register(FailureRate, new(failureRate)) }

type failureRate struct {
	Rate *float64 `json:"rate,omitempty"`
}

func (k *failureRate) Params() []*Param {
	return []*Param{Field(&k.Rate, "Rate", "the share of jobs that fail, 0 to 1.").Min(0).Max(1).Required()}
}

func (*failureRate) About() About {
	return About{Stage: Fate,
		Doc: "the share of jobs that fail with `provider_error` while processing, instead of each model's and effect's own rate (0: none fails); " +
			"a workspace's rule comes before the global one. Drawn from the seed and the job's id. `PUT /faults/failure-rate` makes it.",
		Meets: "that share of jobs fails while processing, instead of each model's own rate (0: none); drawn from the seed and the job's id",
		Shorthands: []Shorthand{{Via: ViaFailureRate, Endpoint: "PUT /faults/failure-rate",
			Doc: "the scope's one `" + FailureRate + "` rule (`failure_rate`)"}}}
}

// FailureRate is the rate.
func (k *failureRate) FailureRate() float64 { return *k.Rate }
