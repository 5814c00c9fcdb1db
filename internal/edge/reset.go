package edge

import (
	"os"
	"syscall"
)

// syscallReset is the error of a read from a connection its peer reset.
var syscallReset = os.NewSyscallError("read", syscall.ECONNRESET)
