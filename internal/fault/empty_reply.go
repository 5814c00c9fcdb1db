package fault

import "github.com/mediamock/mediamock/internal/seed"

// EmptyReply closes the connection with no answer.
const EmptyReply = "empty_reply"

func init() { Register(EmptyReply, new(emptyReply)) }

type emptyReply struct{}

func (*emptyReply) About() About {
	return About{Stage: Deliver, Strikes: Classes, Targets: Targets, Breaks: true,
		Doc:   "the connection closes with no answer.",
		Meets: "the connection closes without a byte (Go: `EOF`)"}
}

// Deliver closes the connection.
func (*emptyReply) Deliver(d Delivery, _ *seed.RNG) { d.Close() }
