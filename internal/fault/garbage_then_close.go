package fault

import (
	"strconv"

	"github.com/mediamock/mediamock/internal/seed"
)

// Garbage sends bytes that are not HTTP, then closes the connection.
const Garbage = "garbage_then_close"

// Limits of the garbage.
const (
	MaxGarbageBytes = 1 << 20 // at most 1 MiB
	DefaultGarbage  = 256
)

func init() { Register(Garbage, new(garbage)) }

type garbage struct {
	Bytes int64 `json:"bytes,omitempty"`
}

func (k *garbage) Params() []*Param {
	return []*Param{Field(&k.Bytes, "Garbage bytes", "how many bytes of garbage; "+strconv.Itoa(DefaultGarbage)+" when absent.").
		Min(1).Max(MaxGarbageBytes).Default(DefaultGarbage)}
}

func (*garbage) About() About {
	return About{Stage: Deliver, Strikes: Classes, Targets: Targets, Breaks: true,
		Doc:   "`bytes` of garbage, not HTTP, then the connection closes.",
		Meets: "bytes that are not HTTP, then close"}
}

// Deliver sends the garbage, drawn from the hit's own source, and closes.
func (k *garbage) Deliver(d Delivery, draws *seed.RNG) {
	n := k.Bytes
	if n == 0 {
		n = DefaultGarbage
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(draws.Uint64())
	}
	d.Send(b)
	d.Close()
}
