package fault_test

import (
	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/fault"
)

func init() { hit(fault.Status, onAccount(mediamock.FaultSpec{Status: 503}), getAccount) }
