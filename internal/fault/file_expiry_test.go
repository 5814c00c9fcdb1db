package fault_test

import (
	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/fault"
)

func init() { hit(fault.FileExpiry, mediamock.FaultSpec{TTLSeconds: new(int64(1))}, download) }
