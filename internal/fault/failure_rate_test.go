package fault_test

import (
	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/fault"
)

func init() { hit(fault.FailureRate, mediamock.FaultSpec{Rate: new(1.0)}, create) }
