package fault_test

import (
	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/fault"
)

func init() {
	hit(fault.Latency, onAccount(mediamock.FaultSpec{Distribution: "fixed", MS: new(int64(0))}), getAccount)
}
