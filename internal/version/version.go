// Package version is mediamock's version: what both MCP servers tell
// their clients (serverInfo.version) and what a HAR export names as its
// creator, the same as `mockserver version` prints.
package version

import (
	"runtime/debug"
	"sync"
)

var (
	mu      sync.Mutex
	stamped string
	module  = sync.OnceValue(fromBuild)
)

// Set stamps the version: the binary calls it at start with its own
// (-ldflags, or its build's commit).
func Set(v string) {
	mu.Lock()
	defer mu.Unlock()
	stamped = v
}

// String is the version stamped, else the mediamock module's in the build
// (the main module's, or a library user's dependency), else "dev".
func String() string {
	mu.Lock()
	v := stamped
	mu.Unlock()
	if v != "" {
		return v
	}
	return module()
}

func fromBuild() string {
	const path = "github.com/mediamock/mediamock"
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Path == path && info.Main.Version != "" && info.Main.Version != "(devel)" {
			return info.Main.Version
		}
		for _, d := range info.Deps {
			if d.Path == path && d.Version != "" && d.Version != "(devel)" {
				return d.Version
			}
		}
	}
	return "dev"
}
