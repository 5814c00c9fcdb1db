package routes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/spec"
)

// Read finds what the parsed document holds: every operation's method,
// path and operationId, in the document's order.
func TestReadFindsWhatTheParsedDocumentHolds(t *testing.T) {
	for _, doc := range []struct {
		name string
		data []byte
	}{{"openapi.json", spec.OpenAPI}, {"control.json", spec.Control}} {
		t.Run(doc.name, func(t *testing.T) {
			rs, err := Read(doc.data)
			require.NoError(t, err)
			c, err := contract.ParseEmbedded(doc.name, doc.data)
			require.NoError(t, err)
			var want []Route
			for _, op := range c.Operations() {
				want = append(want, Route{Method: op.Method, Path: op.Path, ID: op.ID})
			}
			assert.Equal(t, want, rs)
		})
	}
}

func TestReadRefusesAnOperationWithoutAnID(t *testing.T) {
	_, err := Read([]byte(`{"openapi":"3.1.0","paths":{"/x":{"parameters":[],"get":{"summary":"no id"}}}}`))
	assert.ErrorContains(t, err, "GET /x has no operationId")
	rs, err := Read([]byte(`{"paths":{"/x":{"get":{"operationId":"getX"},"x-note":{"operationId":"no"}},"/y/{id}":{"delete":{"operationId":"deleteY"}}},"components":{}}`))
	require.NoError(t, err)
	assert.Equal(t, []Route{{"GET", "/x", "getX"}, {"DELETE", "/y/{id}", "deleteY"}}, rs)
	_, err = Read([]byte(`["paths"]`))
	assert.Error(t, err)
}

func TestCheckNamesWhatIsMissing(t *testing.T) {
	rs := []Route{{"GET", "/a", "getA"}, {"POST", "/b", "postB"}}
	assert.NoError(t, Check("doc.json", rs, []string{"postB", "getA"}))
	assert.EqualError(t, Check("doc.json", rs, []string{"getA"}), "operations of doc.json without a handler: postB")
	assert.EqualError(t, Check("doc.json", rs, []string{"getA", "postB", "getC"}), "handlers that serve no operation of doc.json: getC")
	assert.EqualError(t, Check("doc.json", rs, []string{"getA", "getA", "postB"}), "operation getA of doc.json has two handlers")
}

func BenchmarkReadControlDocument(b *testing.B) {
	for b.Loop() {
		if _, err := Read(spec.Control); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseControlDocument(b *testing.B) {
	for b.Loop() {
		if _, err := contract.ParseEmbedded("control.json", spec.Control); err != nil {
			b.Fatal(err)
		}
	}
}
