// Command mockserver runs the media generation service simulator.
//
//	go run ./cmd/mockserver                      # embedded fixtures, http://127.0.0.1:8080
//	mockserver --clock virtual --seed 7 --db /tmp/state.db
//	MOCKSERVER_ADDR=0.0.0.0:8080 mockserver      # every flag is also an environment variable
//	mockserver health --url http://127.0.0.1:8080  # exit 0 when the server is healthy
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(Run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// Run runs the command with its arguments and environment; it returns the
// exit code.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "health" {
		return runHealth(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "proxy" {
		return runProxy(ctx, args[1:], getenv, stderr)
	}
	if len(args) > 0 && args[0] == "version" {
		fmt.Fprintln(stdout, "mockserver", version)
		return 0
	}
	return runServe(ctx, args, getenv, stderr)
}

// version is stamped at build time: -ldflags "-X main.version=1.2.3".
var version = "dev"
