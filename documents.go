package mediamock

import (
	_ "embed"
	"sync"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/control"
	"github.com/mediamock/mediamock/internal/mcp"
	"github.com/mediamock/mediamock/internal/rest"
	"github.com/mediamock/mediamock/internal/wire"
)

// OpenAPIDocument is openapi.json, the wire contract the server validates
// every request against, served at /api/v1/openapi.json.
//
//go:embed openapi.json
var OpenAPIDocument []byte

// ControlDocument is control.json, the OpenAPI document of the control API,
// served at /_mock/openapi.json.
//
//go:embed control.json
var ControlDocument []byte

// Where the server serves what.
const (
	// BasePath is the REST base path of the service.
	BasePath = rest.BasePath
	// ControlPath is the reserved prefix of the control API.
	ControlPath = control.Path
	// MCPPath is where the MCP server is served (Streamable HTTP).
	MCPPath = mcp.Path
	// FilesPath is where generated and uploaded files are served, outside
	// the API's base path, like a CDN: no authentication, no rate limit.
	FilesPath = wire.FilesPath
	// MaxSnapshotBytes caps a snapshot being restored.
	MaxSnapshotBytes = control.MaxSnapshotBytes
)

// The two documents are parsed and validated once per process.
var (
	loadService = sync.OnceValues(func() (*contract.Contract, error) { return contract.Parse("openapi.json", OpenAPIDocument) })
	loadControl = sync.OnceValues(func() (*contract.Contract, error) { return contract.Parse("control.json", ControlDocument) })
)
