// Package oapigen is the Go client oapi-codegen generates from openapi.json
// with its defaults (types and client), checked in so that the tests beside
// it run the quick-start journey with the client this project's users
// generate, against the plain mock and against its evolve mode.
//
// go generate ./... regenerates it after openapi.json changes, with the
// other generated files (internal/gen's test holds it to openapi.json
// when oapi-codegen is in the module cache).
package oapigen

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml ../../openapi.json
