package fault

import "github.com/mediamock/mediamock/internal/seed"

// Truncate stops the body short of its Content-Length, then closes the
// connection.
const Truncate = "truncate"

func init() { Register(Truncate, new(truncate)) }

type truncate struct {
	Cut
}

func (*truncate) About() About {
	return About{Stage: Deliver, Strikes: Classes, Targets: Targets, Breaks: true,
		Doc:   "the body stops short of its Content-Length (after `after_bytes`, or `after_fraction`, half by default) and the connection closes.",
		Meets: "the head, then the body stops short of its `Content-Length` (`unexpected EOF`)"}
}

// Deliver sends the head and the body up to the cut, then closes.
func (k *truncate) Deliver(d Delivery, _ *seed.RNG) {
	d.Cut(k.At(int64(len(d.Body()))))
	d.Close()
}
