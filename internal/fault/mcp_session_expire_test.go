package fault_test

import (
	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/fault"
)

func init() { hit(fault.MCPSessionExpire, mediamock.FaultSpec{}, toolCall("2025-11-25")) }
