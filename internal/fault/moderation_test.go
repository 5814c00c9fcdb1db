package fault_test

import (
	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/fault"
)

func init() { hit(fault.Moderation, mediamock.FaultSpec{}, refused) }
