package fault

import (
	"math"
	"strconv"
	"time"

	"github.com/mediamock/mediamock/internal/seed"
)

// Latency is wall-clock latency drawn from a distribution, before the
// answer goes.
const Latency = "latency"

// ViaLatency names the shorthand PUT /faults/latency/{operation}: a fixed
// latency rule per operation.
const ViaLatency = "latency"

// Distributions of a latency.
var Distributions = []string{"fixed", "uniform", "lognormal"}

// Limits of a latency.
const (
	MaxLatencyMS = 120_000 // the latency shorthand's limit, which every draw keeps
	MaxSigma     = 4.0
)

func init() { Register(Latency, new(latency)) }

type latency struct {
	Distribution string   `json:"distribution,omitempty"`
	MS           *int64   `json:"ms,omitempty"`
	MinMS        *int64   `json:"min_ms,omitempty"`
	MaxMS        *int64   `json:"max_ms,omitempty"`
	MedianMS     *int64   `json:"median_ms,omitempty"`
	Sigma        *float64 `json:"sigma,omitempty"`
}

func (k *latency) Params() []*Param {
	ms := func(field **int64, title, doc string) *Param {
		return Field(field, title, doc).Min(0).Max(MaxLatencyMS)
	}
	return []*Param{
		Field(&k.Distribution, "Distribution", "`fixed` takes `ms`; `uniform` `min_ms` and `max_ms`; `lognormal` `median_ms` and `sigma` (a long tail). "+
			"Every draw is capped at "+strconv.Itoa(MaxLatencyMS)+" ms (the limit of `PUT /faults/latency`).").Enum(anys(Distributions)...).Required(),
		ms(&k.MS, "Milliseconds", "the latency of the `fixed` distribution."),
		ms(&k.MinMS, "Min ms", "the least latency of the `uniform` distribution."),
		ms(&k.MaxMS, "Max ms", "the greatest latency of the `uniform` distribution."),
		ms(&k.MedianMS, "Median ms", "the median latency of the `lognormal` distribution."),
		Field(&k.Sigma, "Sigma", "the spread of the logarithm of the `lognormal` distribution; the larger, the longer the tail.").Min(0).Max(MaxSigma),
	}
}

func (*latency) About() About {
	return About{Stage: Delay, Strikes: Classes, Targets: Targets,
		Doc:   "wall-clock latency drawn from `distribution`, before the answer goes (`PUT /faults/latency/{operation}` makes a `fixed` one).",
		Meets: "wall-clock delay before the answer, capped at " + strconv.Itoa(MaxLatencyMS/1000) + " s",
		Shorthands: []Shorthand{{Via: ViaLatency, Endpoint: "PUT /faults/latency/{operation}",
			Doc: "a `fixed` `" + Latency + "` rule per operation (`latency_ms`)"}}}
}

// Check holds each distribution to its parameters: those it needs are
// given, those of another are not.
func (k *latency) Check(c *Checks) {
	own := map[string][]**int64{"fixed": {&k.MS}, "uniform": {&k.MinMS, &k.MaxMS}, "lognormal": {&k.MedianMS}}[k.Distribution]
	if own == nil {
		return // no distribution, or an unknown one: its facts say so
	}
	for _, p := range own {
		if *p == nil {
			c.Bad(p, "is required by the "+k.Distribution+" distribution")
		}
	}
	if k.Distribution == "uniform" && k.MinMS != nil && k.MaxMS != nil && *k.MinMS > *k.MaxMS {
		c.Bad(&k.MaxMS, "must not be below min_ms")
	}
	if k.Distribution == "lognormal" && k.Sigma == nil {
		c.Bad(&k.Sigma, "is required by the lognormal distribution, between 0 and "+strconv.FormatFloat(MaxSigma, 'g', -1, 64))
	}
	// A parameter of another distribution is a mistake, not a default.
	for _, p := range []struct {
		field any
		given bool
		of    string
	}{{&k.MS, k.MS != nil, "fixed"}, {&k.MinMS, k.MinMS != nil, "uniform"}, {&k.MaxMS, k.MaxMS != nil, "uniform"},
		{&k.MedianMS, k.MedianMS != nil, "lognormal"}, {&k.Sigma, k.Sigma != nil, "lognormal"}} {
		if p.given && p.of != k.Distribution {
			c.Bad(p.field, "is not a parameter of the "+k.Distribution+" distribution")
		}
	}
}

// Delay draws the latency.
func (k *latency) Delay(draws *seed.RNG) time.Duration {
	ms := 0.0
	switch k.Distribution {
	case "fixed":
		ms = float64(*k.MS)
	case "uniform":
		ms = float64(*k.MinMS) + draws.Float64()*float64(*k.MaxMS-*k.MinMS)
	case "lognormal":
		// Box–Muller: a standard normal from two uniforms.
		u1, u2 := 1-draws.Float64(), draws.Float64()
		z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
		ms = float64(*k.MedianMS) * math.Exp(*k.Sigma*z)
	}
	return time.Duration(min(ms, MaxLatencyMS) * float64(time.Millisecond))
}
