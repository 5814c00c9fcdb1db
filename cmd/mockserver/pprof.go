//go:build pprof

// Built with -tags pprof, the command serves net/http/pprof on the address
// in MOCKSERVER_PPROF_ADDR, for profiling under load (CONTRIBUTING.md,
// Performance). Release builds have no such listener.
package main

import (
	"fmt"
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	addr := os.Getenv("MOCKSERVER_PPROF_ADDR")
	if addr == "" {
		return
	}
	go func() {
		if err := http.ListenAndServe(addr, nil); err != nil {
			fmt.Fprintln(os.Stderr, "mockserver: pprof:", err)
		}
	}()
}
