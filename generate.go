package mediamock

// go generate ./... writes every generated file: internal/gen writes
// control.json's fault parts and the generated pages of docs/reference
// (its test fails when a committed one is stale), and
// contract_test/oapigen's own line writes the oapi-codegen client.

//go:generate go run ./internal/gen
