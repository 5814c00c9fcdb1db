package mediamock

import (
	"testing"

	"github.com/mediamock/mediamock/internal/contract"
)

// TestEmbeddedDocumentsAreValid checks the two documents built into the
// server against the OpenAPI rules: a server parses them without that check.
func TestEmbeddedDocumentsAreValid(t *testing.T) {
	for name, doc := range map[string][]byte{"openapi.json": OpenAPIDocument, "control.json": ControlDocument} {
		if _, err := contract.Parse(name, doc); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
