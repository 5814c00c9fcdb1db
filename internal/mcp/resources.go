package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/gate"
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

// exchangeResourceBytes caps the files one HTTP request may read through
// the SDK (a batch of the 2025-03-26 revision): the SDK holds a result
// several times over while it encodes it. A single read of an asset does
// not go through the SDK: it streams (serveRead).
const exchangeResourceBytes = 16 << 20

// modelsResource is the model catalog, one resource.
var modelsResource = sdk.Resource{URI: modelsURI, Name: "models", Title: "Model catalog", MIMEType: "application/json",
	Description: "The models grouped by modality, as list_models returns them: ids, credits per output, options."}

// assetTemplate is every completed asset of the caller's workspace, by id.
var assetTemplate = sdk.ResourceTemplate{URITemplate: assetURIPrefix + "{id}", Name: "asset", Title: "Library asset",
	Description: "The file of a completed asset of the workspace library (image, video, audio or 3D model), with its media type."}

func (f *Front) addResources(s *sdk.Server, who func(*sdk.RequestExtra) caller) {
	models, assets := modelsResource, assetTemplate // the server keeps them: copies
	s.AddResource(&models,
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			data, err := f.readModels(who(req.Extra))
			if err != nil {
				return nil, err
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: modelsURI, MIMEType: "application/json", Text: string(data)}}}, nil
		})
	s.AddResourceTemplate(&assets,
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return f.readAsset(ctx, who(req.Extra), req.Params.URI)
		})
}

// readModels counts a read of the model catalog and returns it.
func (f *Front) readModels(c caller) ([]byte, error) {
	pass, err := f.count(c)
	if pass.Authenticated() {
		c.x.rate(pass.Rate)
	}
	if err != nil {
		return nil, rpcError(err)
	}
	return json.Marshal(wire.CatalogOf(f.env.Eng.Models("", ""), ""))
}

// readAsset reads a completed asset's file through the SDK (batches,
// stdio), within the exchange's budget.
func (f *Front) readAsset(ctx context.Context, c caller, uri string) (*sdk.ReadResourceResult, error) {
	file, content, err := f.openAsset(ctx, c, uri)
	if err != nil {
		return nil, err
	}
	if err := c.x.spend(file.Size); err != nil {
		return nil, err
	}
	data := make([]byte, file.Size)
	if _, err := io.ReadFull(content, data); err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: file.MimeType, Blob: data}}}, nil
}

// count lets a resource read in through the gate: as the principal the
// HTTP request authenticated as, or, over stdio, with the caller's key.
func (f *Front) count(c caller) (gate.Pass, error) {
	if c.x != nil {
		return f.env.Gate.CountAs(c.x.principal, resourceScope)
	}
	return f.env.Gate.Count(c.authorization, gate.ResourceMCP, resourceScope)
}

// openAsset counts a read of an asset resource and opens its file, with
// the caller's workspace: another workspace's asset is not found.
func (f *Front) openAsset(ctx context.Context, c caller, uri string) (sim.StoredFile, io.Reader, error) {
	pass, err := f.count(c)
	if pass.Authenticated() {
		c.x.rate(pass.Rate)
	}
	if err != nil {
		return sim.StoredFile{}, nil, rpcError(err)
	}
	idText, _ := strings.CutPrefix(uri, assetURIPrefix)
	id, perr := strconv.ParseUint(idText, 10, 64)
	if perr != nil || id == 0 {
		return sim.StoredFile{}, nil, sdk.ResourceNotFoundError(uri)
	}
	eng := f.env.Eng
	g, err := eng.Generation(ctx, pass.Principal, id, 0)
	if err != nil {
		if sim.AsError(err).Kind == sim.ENOTFOUND {
			return sim.StoredFile{}, nil, sdk.ResourceNotFoundError(uri)
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
	return sim.StoredFile{}, nil, sdk.ResourceNotFoundError(uri)
}

// serveRead answers one resources/read itself: of an asset (in either
// revision), or of the model catalog (sessionless). An asset's blob is
// encoded while its file is read, so memory stays flat whatever the
// file's size and however many read at once; the SDK, which would hold the
// file and its encodings several times over, never sees the message.
//
// In the sessionless revision the result names the server in its _meta,
// says it is complete (resultType), and carries the cache hints: the
// catalog is the same for every caller ("public"), an asset is the
// workspace's own ("private"); neither is fresh for long, as a library
// changes under its readers (ttlMs 0, as the lists say).
func (f *Front) serveRead(w *edge.Writer, x *exchange, id json.RawMessage, uri string, stateless bool) {
	frame := func(scope string) (head, tail []byte) {
		head = append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":{`...)
		tail = []byte(`]`)
		if stateless {
			head = append(append(append(head, `"_meta":`...), serverMeta()...), `,"ttlMs":0,"cacheScope":"`+scope+`",`...)
			tail = append(tail, `,"resultType":"complete"`...)
		}
		return append(head, `"contents":[`...), append(tail, "}}"...)
	}
	if uri == modelsURI {
		data, err := f.readModels(x.caller())
		if err != nil {
			writeRPCError(w, id, err)
			return
		}
		content, err := json.Marshal(sdk.ResourceContents{URI: modelsURI, MIMEType: "application/json", Text: string(data)})
		if err != nil {
			writeRPCError(w, id, err)
			return
		}
		head, tail := frame("public")
		if stateless {
			w.Header().Set("Cache-Control", "no-cache, no-transform")
		}
		edge.WriteRaw(w, http.StatusOK, append(append(head, content...), tail...))
		return
	}
	if !strings.HasPrefix(uri, assetURIPrefix) {
		writeRPCError(w, id, sdk.ResourceNotFoundError(uri))
		return
	}
	file, content, err := f.openAsset(context.Background(), x.caller(), uri)
	if err != nil {
		writeRPCError(w, id, err)
		return
	}
	uriJSON, _ := json.Marshal(uri)
	mimeJSON, _ := json.Marshal(file.MimeType)
	head, tail := frame("private")
	head = append(append(append(append(append(head, `{"uri":`...), uriJSON...), `,"mimeType":`...), mimeJSON...), `,"blob":"`...)
	tail = append([]byte(`"}`), tail...)
	w.Header().Set("Content-Type", "application/json")
	if stateless {
		w.Header().Set("Cache-Control", "no-cache, no-transform")
	}
	w.Header().Set("Content-Length", strconv.FormatInt(int64(len(head))+int64(base64.StdEncoding.EncodedLen(int(file.Size)))+int64(len(tail)), 10))
	w.WriteHeader(http.StatusOK)
	w.Write(head)
	enc := base64.NewEncoder(base64.StdEncoding, w)
	if _, err := io.CopyBuffer(enc, content, make([]byte, 48<<10)); err != nil {
		f.env.Log.Warn("MCP resource read cut short", "uri", uri, "err", err)
		w.Abort()
		return
	}
	enc.Close()
	w.Write(tail)
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
	case sim.EUNAUTHORIZED, sim.EFORBIDDEN, sim.ECONFLICT, sim.ERATELIMIT, sim.ETOOLARGE:
		code = codeRefused
	}
	return &jsonrpc.Error{Code: code, Message: body.Error.Code + ": " + body.Error.Message, Data: data}
}

// codeRefused is the implementation-defined JSON-RPC error code of a
// request the service refuses (a scope, the rate limit, a state, a size):
// the spec's error object, in data, says which.
const codeRefused = -32001
