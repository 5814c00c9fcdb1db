package testkit

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/spec"
)

// ChangedOpenAPI is openapi.json with three changes a service's next
// document could bring, for spec-diff's tests: getAccount's response loses
// credits_balance (a removed field), the Modality enum loses audio (a query
// parameter of listModels, a request field of createGeneration: a narrowed
// enum), and listProjects gets a new required query parameter region.
func ChangedOpenAPI(t testing.TB) []byte {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(spec.OpenAPI, &doc))
	obj := func(m any, keys ...string) map[string]any {
		for _, k := range keys {
			m = m.(map[string]any)[k]
		}
		return m.(map[string]any)
	}
	account := obj(doc, "components", "schemas", "Account")
	delete(obj(account, "properties"), "credits_balance")
	account["required"] = slices.DeleteFunc(account["required"].([]any), func(v any) bool { return v == "credits_balance" })
	modality := obj(doc, "components", "schemas", "Modality")
	modality["enum"] = slices.DeleteFunc(modality["enum"].([]any), func(v any) bool { return v == "audio" })
	list := obj(doc, "paths", "/projects", "get")
	list["parameters"] = append(list["parameters"].([]any),
		map[string]any{"name": "region", "in": "query", "required": true, "schema": map[string]any{"type": "string"}})
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}
