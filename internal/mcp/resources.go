package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// The resources: the model catalog, and every completed asset of the
// caller's workspace by id.
const (
	modelsURI      = "mediamock://models"
	assetURIPrefix = "mediamock://assets/"
)

// Reading a resource needs the read scope but does not count against the
// rate limit: an asset's bytes are what REST serves under /files/ (no
// authentication, no rate limit), and the catalog is static.
const resourceScope = "read"

// maxResourceBytes caps the file a resource read returns.
const maxResourceBytes = 64 << 20

func (f *Front) addResources(s *sdk.Server, who func(*sdk.RequestExtra) caller) {
	s.AddResource(&sdk.Resource{URI: modelsURI, Name: "models", Title: "Model catalog", MIMEType: "application/json",
		Description: "The models grouped by modality, as list_models returns them: ids, credits per output, options."},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			if _, err := f.env.Gate.Identify(who(req.Extra).authorization, resourceScope); err != nil {
				return nil, rpcError(err)
			}
			data, err := json.Marshal(wire.CatalogOf(f.env.Eng.Models("", ""), ""))
			if err != nil {
				return nil, err
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: modelsURI, MIMEType: "application/json", Text: string(data)}}}, nil
		})
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: assetURIPrefix + "{id}", Name: "asset", Title: "Library asset",
		Description: "The file of a completed asset of the workspace library (image, video, audio or 3D model), with its media type."},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return f.readAsset(ctx, who(req.Extra), req.Params.URI)
		})
}

// readAsset reads a completed asset's file through the engine, with the
// caller's workspace: another workspace's asset is not found.
func (f *Front) readAsset(ctx context.Context, c caller, uri string) (*sdk.ReadResourceResult, error) {
	pass, err := f.env.Gate.Identify(c.authorization, resourceScope)
	if err != nil {
		return nil, rpcError(err)
	}
	idText, _ := strings.CutPrefix(uri, assetURIPrefix)
	id, perr := strconv.ParseUint(idText, 10, 64)
	if perr != nil || id == 0 {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	eng := f.env.Eng
	g, err := eng.Generation(ctx, pass.Principal, id, 0)
	if err != nil {
		if sim.AsError(err).Kind == sim.ENOTFOUND {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		return nil, rpcError(err)
	}
	for _, a := range g.Assets {
		if a.ID != id {
			continue
		}
		if a.Status != sim.StatusCompleted {
			return nil, rpcError(&sim.Error{Kind: sim.ECONFLICT, Code: "asset_not_ready",
				Message: fmt.Sprintf("Asset %d is %s; its file exists once it is completed.", id, a.Status),
				Details: map[string]any{"status": a.Status}})
		}
		file, content, err := eng.OpenFile(eng.AssetFile(a))
		if err != nil {
			return nil, rpcError(err)
		}
		data, err := io.ReadAll(io.LimitReader(content, maxResourceBytes))
		if err != nil {
			return nil, err
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: file.MimeType, Blob: data}}}, nil
	}
	return nil, sdk.ResourceNotFoundError(uri)
}

// rpcError turns an engine or gate error into a JSON-RPC error that carries
// the spec's error object as its data.
func rpcError(err error) error {
	_, body := wire.ErrorOf(err)
	data, _ := json.Marshal(body)
	code := int64(jsonrpc.CodeInternalError)
	switch sim.AsError(err).Kind {
	case sim.EINVALID:
		code = jsonrpc.CodeInvalidParams
	case sim.EUNAUTHORIZED, sim.EFORBIDDEN, sim.ECONFLICT:
		code = -32001 // implementation-defined: the request is refused
	}
	return &jsonrpc.Error{Code: code, Message: body.Error.Code + ": " + body.Error.Message, Data: data}
}
