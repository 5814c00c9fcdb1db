package fault_test

import (
	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/fault"
)

func init() { hit(fault.SlowBody, onAccount(mediamock.FaultSpec{BytesPerSecond: 1 << 30}), getAccount) }
