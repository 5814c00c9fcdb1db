// Package spec holds the two OpenAPI documents of the project, embedded:
// openapi.json, the service's wire contract (every operation, field, rule,
// status and header, with the x- extensions that describe each operation
// to the fronts), and control.json, the control API's. It imports nothing,
// so that a client-side checker (package conformance) can hold a server to
// the contract without linking the simulator.
//
//	doc, err := openapi3.NewLoader().LoadFromData(spec.OpenAPI)
//
// The files live in this folder; the repository's root links to them.
package spec

import _ "embed"

// OpenAPI is openapi.json, served at /api/v1/openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

// Control is control.json, the control API's document, served at
// /_mock/openapi.json.
//
//go:embed control.json
var Control []byte
