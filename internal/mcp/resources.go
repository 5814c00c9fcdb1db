package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/internal/gate"
	"github.com/mediamock/mediamock/internal/mcpserver"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// The resources: the model catalog, and every completed asset of the
// caller's workspace by id.
const (
	modelsURI      = "mediamock://models"
	assetURIPrefix = "mediamock://assets/"
)

// Reading a resource needs the read scope and counts once against the
// rate window, as a tool call does: the spec exempts only MCP's protocol
// messages (initialize, tools/list, ping), and a read moves a file.
const resourceScope = "read"

// exchangeResourceBytes caps the files the reads of one HTTP request
// return together (a batch of the 2025-03-26 revision), held whole while
// its answer is written. A read alone is not held: its blob is encoded
// while the file is read.
const exchangeResourceBytes = 16 << 20

// modelsResource is the model catalog, one resource.
var modelsResource = mcpserver.Resource{URI: modelsURI, Name: "models", Title: "Model catalog", MIMEType: "application/json",
	Description: "The models grouped by modality, as list_models returns them: ids, credits per output, options."}

// assetTemplate is every completed asset of the caller's workspace, by id.
var assetTemplate = mcpserver.ResourceTemplate{URITemplate: assetURIPrefix + "{id}", Name: "asset", Title: "Library asset",
	Description: "The file of a completed asset of the workspace library (image, video, audio or 3D model), with its media type."}

func (f *Front) addResources() {
	f.server.AddResource(modelsResource, func(ctx context.Context, uri string) (*mcpserver.ReadResult, error) {
		data, err := f.readModels(callerFrom(ctx))
		if err != nil {
			return nil, err
		}
		return &mcpserver.ReadResult{Contents: []mcpserver.ResourceContents{{URI: modelsURI, MIMEType: "application/json", Text: string(data)}}}, nil
	})
	// An asset belongs to the caller's workspace: no shared cache. Its
	// file streams into the answer.
	f.server.AddResourceTemplate(assetTemplate, func(ctx context.Context, uri string) (*mcpserver.ReadResult, error) {
		c := callerFrom(ctx)
		file, content, err := f.openAsset(ctx, c, uri)
		if err != nil {
			return nil, err
		}
		if err := c.out.spend(file.Size); err != nil {
			return nil, err
		}
		return &mcpserver.ReadResult{CacheScope: "private", Contents: []mcpserver.ResourceContents{
			{URI: uri, MIMEType: file.MimeType, BlobReader: content, BlobSize: file.Size}}}, nil
	}, mcpserver.Streamed)
}

// readModels counts a read of the model catalog and returns it.
func (f *Front) readModels(c caller) ([]byte, error) {
	pass, err := f.count(c)
	if pass.Authenticated() {
		c.out.rate(pass.Rate)
	}
	if err != nil {
		return nil, rpcError(err)
	}
	return json.Marshal(wire.CatalogOf(f.env.Eng.Models("", ""), ""))
}

// count lets a resource read in through the gate: as the principal the
// HTTP request authenticated as, or, over stdio, with the caller's key.
func (f *Front) count(c caller) (gate.Pass, error) {
	if c.principal != nil {
		return f.env.Gate.CountAs(*c.principal, resourceScope)
	}
	return f.env.Gate.Count(c.authorization, gate.ResourceMCP, resourceScope)
}

// openAsset counts a read of an asset resource and opens its file, with
// the caller's workspace: another workspace's asset is not found.
func (f *Front) openAsset(ctx context.Context, c caller, uri string) (sim.StoredFile, io.Reader, error) {
	pass, err := f.count(c)
	if pass.Authenticated() {
		c.out.rate(pass.Rate)
	}
	if err != nil {
		return sim.StoredFile{}, nil, rpcError(err)
	}
	idText, _ := strings.CutPrefix(uri, assetURIPrefix)
	id, perr := strconv.ParseUint(idText, 10, 64)
	if perr != nil || id == 0 {
		return sim.StoredFile{}, nil, mcpserver.ResourceNotFound(uri)
	}
	eng := f.env.Eng
	g, err := eng.Generation(ctx, pass.Principal, id, 0)
	if err != nil {
		if sim.AsError(err).Kind == sim.ENOTFOUND {
			return sim.StoredFile{}, nil, mcpserver.ResourceNotFound(uri)
		}
		return sim.StoredFile{}, nil, rpcError(err)
	}
	for _, a := range g.Assets {
		if a.ID != id {
			continue
		}
		if a.Status != sim.StatusCompleted {
			return sim.StoredFile{}, nil, rpcError(&sim.Error{Kind: sim.ECONFLICT, Code: "asset_not_ready",
				Message: fmt.Sprintf("Asset %d is %s; its file exists once it is completed.", id, a.Status),
				Details: map[string]any{"status": a.Status}})
		}
		file, content, err := eng.OpenFile(eng.AssetFile(a))
		if err != nil {
			return sim.StoredFile{}, nil, rpcError(err)
		}
		return file, content, nil
	}
	return sim.StoredFile{}, nil, mcpserver.ResourceNotFound(uri)
}

// rpcError turns an engine or gate error into a JSON-RPC error that carries
// the spec's error object as its data.
func rpcError(err error) *mcpserver.Error {
	_, body := wire.ErrorOf(err)
	data, _ := json.Marshal(body)
	code := int64(mcpserver.CodeInternalError)
	switch sim.AsError(err).Kind {
	case sim.EINVALID:
		code = mcpserver.CodeInvalidParams
	case sim.EUNAUTHORIZED, sim.EFORBIDDEN, sim.ECONFLICT, sim.ERATELIMIT, sim.ETOOLARGE:
		code = codeRefused
	}
	return &mcpserver.Error{Code: code, Message: body.Error.Code + ": " + body.Error.Message, Data: data}
}

// codeRefused is the implementation-defined JSON-RPC error code of a
// request the service refuses (a scope, the rate limit, a state, a size):
// the spec's error object, in data, says which.
const codeRefused = -32001
