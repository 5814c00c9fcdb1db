package mediamock

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mediamock/mediamock/internal/control"
	"github.com/mediamock/mediamock/internal/mcp"
	"github.com/mediamock/mediamock/internal/rest"
	"github.com/mediamock/mediamock/internal/wire"
)

// Where the server serves what.
const (
	// BasePath is the REST base path of the service.
	BasePath = rest.BasePath
	// ControlPath is the reserved prefix of the control API.
	ControlPath = control.Path
	// MCPPath is where the MCP server is served (Streamable HTTP).
	MCPPath = mcp.Path
	// ControlMCPPath is where the control MCP server is served (Streamable
	// HTTP), under the control API's prefix.
	ControlMCPPath = mcp.ControlPath
	// FilesPath is where generated and uploaded files are served, outside
	// the API's base path, like a CDN: no authentication, no rate limit.
	FilesPath = wire.FilesPath
	// MaxSnapshotBytes caps a snapshot being restored.
	MaxSnapshotBytes = control.MaxSnapshotBytes
)

// ServeHTTP serves a request: every request passes the edge (request id,
// body cap, panic recovery, journal), then the dashboard takes /_mock/ui
// (and GET /, which leads there), the control API the rest of /_mock, the
// authorization server /oauth/ and its /.well-known/ metadata, the MCP
// server /mcp and the REST front everything else.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.fronts.ServeHTTP(w, r) }

// MCPURL is the address of the MCP server (Streamable HTTP), URL() + "/mcp".
func (s *Server) MCPURL() string { return s.url + MCPPath }

// ServeMCP serves one MCP session over in and out (stdio: newline-delimited
// JSON-RPC) until in ends or ctx does, on behalf of the API key (or access
// token) apiKey. It shares everything with the HTTP fronts: the rate
// limit, the journal, the coverage, the clock.
func (s *Server) ServeMCP(ctx context.Context, in io.Reader, out io.Writer, apiKey string) error {
	if _, ok := s.eng.Authenticate(apiKey); !ok {
		return fmt.Errorf("the API key %q is not a key or token of the simulation", apiKey)
	}
	base := s.opts.PublicURL
	if base == "" {
		base = s.url
	}
	f, err := s.fronts.MCP()
	if err != nil {
		return err
	}
	return f.ServeStdio(ctx, in, out, apiKey, base)
}

// ControlMCPURL is the address of the control MCP server (Streamable
// HTTP), URL() + "/_mock/mcp": the control API as MCP tools, for an agent
// that steers the simulation.
func (s *Server) ControlMCPURL() string { return s.url + ControlMCPPath }

// ServeControlMCP serves one session of the control MCP server over in and
// out (stdio: newline-delimited JSON-RPC) until in ends or ctx does. Every
// tool call is a control request made with controlToken: the server's
// control token, a sandbox's (that sandbox alone), or "" on a server
// without one.
func (s *Server) ServeControlMCP(ctx context.Context, in io.Reader, out io.Writer, controlToken string) error {
	c, err := s.fronts.ControlMCP()
	if err != nil {
		return err
	}
	authorization := ""
	if controlToken != "" {
		authorization = "Bearer " + controlToken
	}
	return c.ServeStdio(ctx, in, out, authorization, strings.TrimPrefix(strings.TrimPrefix(s.url, "http://"), "https://"))
}
