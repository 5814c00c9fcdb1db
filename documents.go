package mediamock

import (
	"sync"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/contract/prepared"
	"github.com/mediamock/mediamock/spec"
)

// OpenAPIDocument is openapi.json, the wire contract the server validates
// every request against, served at /api/v1/openapi.json (package spec
// holds it for programs that do not need the simulator).
var OpenAPIDocument = spec.OpenAPI

// ControlDocument is control.json, the OpenAPI document of the control API,
// served at /_mock/openapi.json.
var ControlDocument = spec.Control

// The two documents are parsed once per process (TestEmbeddedDocumentsAreValid
// checks them against the OpenAPI rules). openapi.json, which every first
// request needs, is built from its form prepared at build time (package
// prepared) while it is the document that form was made from; control.json
// is parsed on the control plane's first use of it.
var (
	loadService = sync.OnceValues(func() (*contract.Contract, error) {
		if doc := prepared.Service(OpenAPIDocument); doc != nil {
			return contract.ParsePrepared("openapi.json", OpenAPIDocument, doc)
		}
		return contract.ParseEmbedded("openapi.json", OpenAPIDocument)
	})
	loadControl = sync.OnceValues(func() (*contract.Contract, error) {
		return contract.ParseEmbedded("control.json", ControlDocument)
	})
)

// Preload starts building the OpenAPI document's contract in the
// background, the longest part of a first server's start; New waits for it. A program that
// will start a server calls it first thing, to overlap it with the rest of
// its own start.
func Preload() { go loadService() }
