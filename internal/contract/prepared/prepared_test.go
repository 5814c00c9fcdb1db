package prepared

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mediamock/mediamock/spec"
)

// The prepared form is what kin-openapi's decoder makes of openapi.json,
// and once its references are resolved, what kin-openapi's loader makes of
// the file: deep-equal, unexported fields and shared pointers included.
func TestServiceIsTheLoadersDocument(t *testing.T) {
	doc := Service(spec.OpenAPI)
	if doc == nil {
		t.Fatal("the prepared form is not of spec/openapi.json: run go generate ./...")
	}
	var decoded openapi3.T
	if err := json.Unmarshal(spec.OpenAPI, &decoded); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(doc, &decoded) {
		t.Fatal("the prepared form differs from openapi.json decoded")
	}
	if err := openapi3.NewLoader().ResolveRefsIn(doc, nil); err != nil {
		t.Fatal(err)
	}
	loaded, err := openapi3.NewLoader().LoadFromData(spec.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(doc, loaded) {
		t.Fatal("the prepared form, resolved, differs from the loader's load of openapi.json")
	}
	// The resolved references point into the components, as the loader's do.
	ref := doc.Paths.Find("/account").Get.Responses.Status(200).Value.Content.Get("application/json").Schema
	if ref.Ref == "" || ref.Value != doc.Components.Schemas["Account"].Value {
		t.Errorf("a response's schema reference does not point to its component: %q", ref.Ref)
	}
	// Each call makes a document of its own.
	if Service(spec.OpenAPI) == Service(spec.OpenAPI) {
		t.Error("two calls share a document")
	}
}

// A document other than the one the form was made from has none: the
// caller decodes it.
func TestServiceOfAnotherDocument(t *testing.T) {
	changed := append([]byte(nil), spec.OpenAPI...)
	changed[len(changed)/2] ^= 1
	for name, data := range map[string][]byte{"changed": changed, "shorter": spec.OpenAPI[:len(spec.OpenAPI)-1], "control.json": spec.Control} {
		if Service(data) != nil {
			t.Errorf("%s: a prepared form", name)
		}
	}
}
