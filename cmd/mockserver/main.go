// Command mockserver runs the media generation service simulator.
//
//	go run ./cmd/mockserver                      # embedded fixtures, http://127.0.0.1:8080
//	mockserver --clock virtual --seed 7 --db /tmp/state.db
//	MOCKSERVER_ADDR=0.0.0.0:8080 mockserver      # every flag is also an environment variable
//	mockserver health --url http://127.0.0.1:8080  # exit 0 when the server is healthy
//	mockserver mcp --api-key mk_test_all_scopes  # an MCP server over stdio, with a simulation of its own
//	mockserver mcp --api-key mk_test_all_scopes --url http://127.0.0.1:8080  # stdio bridged to a running server
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
	os.Exit(Run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// Run runs the command with its arguments, environment and standard
// streams; it returns the exit code.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "mcp" {
		return runMCP(ctx, args[1:], getenv, stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "health" {
		return runHealth(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "version" {
		fmt.Fprintln(stdout, "mockserver", version)
		return 0
	}
	return runServe(ctx, args, getenv, stderr)
}

// version is stamped at build time: -ldflags "-X main.version=1.2.3".
var version = "dev"
