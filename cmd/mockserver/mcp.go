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
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/mcp"
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
	// The standalone event stream would be opened after the handshake, which
	// a relay does not take part in: every answer comes on its request's
	// own stream.
	remote, err := (&sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: client, DisableStandaloneSSE: true}).Connect(ctx)
	if err != nil {
		log.Error("connect", "url", endpoint, "err", err)
		return 1
	}
	lines := mcp.NewStdio(ctx, stdin, stdout)
	local, err := (&sdk.IOTransport{Reader: lines.Reader, Writer: lines.Writer, MaxLineLength: -1}).Connect(ctx)
	if err != nil {
		log.Error("stdio", "err", err)
		return 1
	}
	log.Info("mediamock bridge ready", "mcp", endpoint, "version", version)
	done := make(chan error, 2)
	var calls sync.WaitGroup
	go func() { // from the agent to the server
		for {
			msg, err := local.Read(ctx)
			if err != nil {
				done <- err
				return
			}
			req, isCall := msg.(*jsonrpc.Request)
			if !isCall || !req.IsCall() || req.Method == "initialize" {
				// The handshake, notifications and responses go in order:
				// the session exists, and "initialized" has reached the
				// server, before the calls after them.
				if err := remote.Write(ctx, msg); err != nil {
					log.Warn("relay to server", "err", err)
					if isCall && req.IsCall() {
						_ = local.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mockserver bridge: " + err.Error()}})
					}
				}
				continue
			}
			// A call may wait (wait_seconds): it must not hold up the
			// cancellation that may follow it.
			calls.Add(1)
			go func() {
				defer calls.Done()
				if err := remote.Write(ctx, req); err != nil {
					log.Warn("relay to server", "method", req.Method, "err", err)
					_ = local.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mockserver bridge: " + err.Error()}})
				}
			}()
		}
	}()
	go func() { // from the server to the agent
		for {
			msg, err := remote.Read(ctx)
			if err != nil {
				done <- err
				return
			}
			if err := local.Write(ctx, msg); err != nil {
				done <- err
				return
			}
		}
	}()
	err = <-done
	calls.Wait()
	remote.Close()
	local.Close()
	if err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
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
