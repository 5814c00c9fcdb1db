package mediamock

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/fault"
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

var updateControl = flag.Bool("update-control", false, "write control.json's fault kinds and parameters from the kind table")

// TestControlDocumentFollowsTheKinds holds control.json to the fault kind
// table (internal/fault): the kinds, their parameters and descriptions, the
// shorthands' via values and the x-fault-kinds the dashboard reads. After
// changing a row, run `go test -run TestControlDocumentFollowsTheKinds
// -update-control .` to write them.
func TestControlDocumentFollowsTheKinds(t *testing.T) {
	want, err := fault.ControlDocument(ControlDocument)
	if err != nil {
		t.Fatal(err)
	}
	if *updateControl {
		if err := os.WriteFile("spec/control.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(want, ControlDocument) {
		t.Errorf("control.json does not follow the fault kind table: run go test -run TestControlDocumentFollowsTheKinds -update-control . (and review the diff)")
	}
}
