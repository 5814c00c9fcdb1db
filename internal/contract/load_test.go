package contract

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/contract/prepared"
)

// TestLoadInPartsEqualsLoader decodes both documents in parts and whole
// (kin-openapi's loader): they must be the same document.
func TestLoadInPartsEqualsLoader(t *testing.T) {
	for _, name := range []string{"../../openapi.json", "../../control.json"} {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		whole, err := openapi3.NewLoader().LoadFromData(data)
		require.NoError(t, err)
		parts, err := load(data)
		require.NoError(t, err)
		a, err := json.Marshal(whole)
		require.NoError(t, err)
		b, err := json.Marshal(parts)
		require.NoError(t, err)
		require.JSONEq(t, string(a), string(b), name)
		require.Equal(t, len(whole.Paths.Map()), len(parts.Paths.Map()))
	}
}

// TestLoadFallsBack decodes what does not split (YAML, no paths) whole, and
// refuses what is not a document.
func TestLoadFallsBack(t *testing.T) {
	doc, err := load([]byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n"))
	require.NoError(t, err)
	require.Equal(t, "t", doc.Info.Title)
	_, err = load([]byte(`{"openapi": "3.0.3", "paths": {"/a": 7}}`))
	require.Error(t, err)
	_, err = load([]byte(`{"openapi": `))
	require.Error(t, err)
}

// BenchmarkLoad is the load of openapi.json: kin-openapi's loader, the
// parts decoded at once, and the form prepared at build time.
func BenchmarkLoad(b *testing.B) {
	data, err := os.ReadFile("../../openapi.json")
	require.NoError(b, err)
	b.Run("loader", func(b *testing.B) {
		for b.Loop() {
			if _, err := openapi3.NewLoader().LoadFromData(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parts", func(b *testing.B) {
		for b.Loop() {
			if _, err := load(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What a server does: the form prepared at build time, its references
	// resolved by the loader.
	b.Run("prepared", func(b *testing.B) {
		for b.Loop() {
			doc := prepared.Service(data)
			if doc == nil {
				b.Fatal("no prepared form of openapi.json: run go generate ./...")
			}
			if err := openapi3.NewLoader().ResolveRefsIn(doc, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
