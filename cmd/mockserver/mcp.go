package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/mcpserver"
)

// runMCP serves MCP over stdio, for agents that start their MCP servers as
// processes: by default a simulation of its own (the serve command's
// settings, a temporary state and a free loopback port for the file
// addresses and the control API), or, with --url, a bridge to the /mcp of
// a running server, so that an agent and a test suite share one
// simulation. With --control it serves the control MCP server instead (the
// control API as tools), its calls made with --control-token. Stdout
// carries only protocol messages; the log goes to stderr.
func runMCP(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	s, err := parseCommand(true, args, getenv, stdout, stderr)
	if err == nil && s.APIKey == "" && !s.Control {
		err = errors.New("mcp needs an API key: --api-key or MOCKSERVER_API_KEY")
	}
	if code, stop := commandLine("mockserver", err, stderr); stop {
		return code
	}
	log, err := s.newLogger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "mockserver:", err)
		return 2
	}
	if s.URL != "" {
		return bridge(ctx, s, stdin, stdout, log)
	}
	srv, opts, code := s.start(ctx, log, stderr)
	if srv == nil {
		return code
	}
	defer srv.Close()
	ready := []any{"mcp", "stdio"}
	serve := func() error { return srv.ServeMCP(ctx, stdin, stdout, s.APIKey) }
	if s.Control {
		ready = append(ready, "server", "control")
		serve = func() error { return srv.ServeControlMCP(ctx, stdin, stdout, s.ControlToken) }
	} else if _, ok := srv.WorkspaceID(s.APIKey); !ok {
		fmt.Fprintf(stderr, "mockserver: %s: not an API key or access token of the simulation\n", s.name("api-key"))
		return 2
	}
	log.Info("mediamock ready", append(ready, "url", srv.BaseURL(), "clock", string(opts.Clock),
		"speed", strconv.FormatFloat(opts.Speed, 'g', -1, 64), "seed", opts.Seed, "db", opts.DBPath, "version", version)...)
	if err := serve(); err != nil {
		log.Error("mcp session", "err", err)
		return 1
	}
	if err := srv.Close(); err != nil {
		log.Error("shutdown", "err", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

// bridge relays MCP messages between stdio and the Streamable HTTP endpoint
// of a running server, adding the API key to every request (the control
// token, to the control MCP server's, with --control).
func bridge(ctx context.Context, s *settings, stdin io.Reader, stdout io.Writer, log *slog.Logger) int {
	path, key := mediamock.MCPPath, s.APIKey
	if s.Control {
		path, key = mediamock.ControlMCPPath, s.ControlToken
	}
	endpoint := strings.TrimRight(s.URL, "/")
	endpoint = strings.TrimSuffix(strings.TrimSuffix(endpoint, mediamock.ControlMCPPath), mediamock.MCPPath) + path
	client := &http.Client{Transport: bearerTransport{key: key, base: http.DefaultTransport}}
	log.Info("mediamock bridge ready", "mcp", endpoint, "version", version)
	if err := mcpserver.Bridge(ctx, stdin, stdout, endpoint, client); err != nil {
		log.Error("bridge", "err", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

type bearerTransport struct {
	key  string
	base http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.key != "" {
		r.Header.Set("Authorization", "Bearer "+b.key)
	}
	return b.base.RoundTrip(r)
}
