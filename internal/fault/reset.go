package fault

import "github.com/mediamock/mediamock/internal/seed"

// Reset resets the connection (a TCP RST) after after_bytes of the
// response.
const Reset = "reset"

func init() { Register(Reset, new(reset)) }

type reset struct {
	CutBytes
}

func (*reset) About() About {
	return About{Stage: Deliver, Strikes: Classes, Targets: Targets, Breaks: true,
		Doc:   "the connection is reset (TCP RST) after `after_bytes` of the response (0: before anything).",
		Meets: "TCP RST (`ECONNRESET`), after `after_bytes` of the response (0: at once)"}
}

// Deliver sends the head and after_bytes of the body (nothing when that
// is none of it), then resets the connection.
func (k *reset) Deliver(d Delivery, _ *seed.RNG) {
	if k.AfterBytes != nil {
		if cut := min(*k.AfterBytes, int64(len(d.Body()))); cut > 0 {
			d.Cut(cut)
		}
	}
	d.Reset()
}
