package fault

import "github.com/mediamock/mediamock/internal/seed"

// SlowBody trickles the body at bytes_per_second.
const SlowBody = "slow_body"

func init() { Register(SlowBody, new(slowBody)) }

type slowBody struct {
	BytesPerSecond int64 `json:"bytes_per_second,omitempty"`
}

func (k *slowBody) Params() []*Param {
	return []*Param{Field(&k.BytesPerSecond, "Bytes per second", "the pace of the body, sent in chunks ten times a second.").Min(1).Format("int64").Required()}
}

func (*slowBody) About() About {
	return About{Stage: Deliver, Strikes: Classes, Targets: Targets,
		Doc:   "the body trickles at `bytes_per_second`.",
		Meets: "every byte, at a trickle"}
}

// Deliver sends the whole answer at its pace.
func (k *slowBody) Deliver(d Delivery, _ *seed.RNG) { d.Trickle(k.BytesPerSecond) }
