// Package prepared holds openapi.json as kin-openapi decodes it, written
// at build time as Go that builds the same values (service.go, by go
// generate ./...): building it takes a small part of the time decoding
// the JSON takes, which was the longest part of a server's start. What it
// returns has its references unresolved, as kin-openapi's decoder leaves
// a document; the loader's ResolveRefsIn finishes it, and the result is
// held deep-equal to the loader's own load of the file by a test.
package prepared

import (
	"hash/crc32"

	"github.com/getkin/kin-openapi/openapi3"
)

// Service is openapi.json decoded, its references not resolved, when data
// is the document it was made from; else nil (a build whose openapi.json
// changed without go generate ./..., which TestGeneratedFiles fails). Each
// call makes a new document.
func Service(data []byte) *openapi3.T {
	if len(data) != serviceSize || crc32.ChecksumIEEE(data) != serviceSum {
		return nil
	}
	return service()
}

// ptr is a pointer to a copy of v, for the generated literals.
func ptr[T any](v T) *T { return &v }
