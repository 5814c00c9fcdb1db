package control

import (
	"bytes"
	"slices"
	"testing"

	"github.com/mediamock/mediamock/internal/routes"
	"github.com/mediamock/mediamock/spec"
)

// The routes read at build time are those routes.Read reads of the
// embedded control.json, and the ones a server's table is made of; a
// document that is not the one they were read from is read itself.
func TestRoutesReadAtBuildTime(t *testing.T) {
	want, err := routes.Read(spec.Control)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(documentRoutes, want) {
		t.Fatalf("routes.gen.go is not control.json's routes: run go generate ./...\n got %v\nwant %v", documentRoutes, want)
	}
	if rs := read(spec.Control).rs; !slices.Equal(rs, want) {
		t.Errorf("the embedded document's routes: %v", rs)
	}
	// The same bytes elsewhere, one route renamed: read from the document.
	other := slices.Clone(spec.Control)
	at := bytes.Index(other, []byte(`"getHealth"`))
	if at < 0 {
		t.Fatal("control.json has no getHealth")
	}
	other[at+1] = 'G'
	rt := read(other)
	if rt.err == nil || len(rt.rs) != len(want) || rt.rs[0].ID != "GetHealth" {
		t.Errorf("a changed document: routes %v, error %v", rt.rs, rt.err)
	}
}
