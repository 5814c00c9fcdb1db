package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// load decodes an OpenAPI document in parts at once, then resolves its
// references as kin-openapi's loader does. kin-openapi decodes a document
// with nested JSON decoders, one per level, which makes the parse of
// openapi.json the longest part of a server's start (about 18 ms); the
// parts (two halves of the paths, and each section of the components) run
// on their own goroutines, so on two cores the parse takes about 12 ms. A
// document that does not split that way (YAML, say) is decoded whole.
func load(data []byte) (*openapi3.T, error) {
	whole := func() (*openapi3.T, error) { return openapi3.NewLoader().LoadFromData(data) }
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top["paths"] == nil {
		return whole()
	}
	var pathsByKey map[string]json.RawMessage
	if err := json.Unmarshal(top["paths"], &pathsByKey); err != nil {
		return whole()
	}
	var sections map[string]json.RawMessage
	if c := top["components"]; c != nil {
		if err := json.Unmarshal(c, &sections); err != nil {
			return whole()
		}
		for name := range sections {
			if !slices.Contains(componentSections, name) {
				return whole() // extensions, or a section decoded below only whole
			}
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	decode := func(raw []byte, v any) {
		wg.Go(func() {
			if err := json.Unmarshal(raw, v); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}

	keys := make([]string, 0, len(pathsByKey))
	for k := range pathsByKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var halves [2]openapi3.Paths
	for i, half := range [2][]string{keys[:len(keys)/2], keys[len(keys)/2:]} {
		raw := make(map[string]json.RawMessage, len(half))
		for _, k := range half {
			raw[k] = pathsByKey[k]
		}
		b, err := json.Marshal(raw)
		if err != nil {
			return nil, err
		}
		decode(b, &halves[i])
	}
	var c openapi3.Components
	for name, raw := range sections {
		switch name {
		case "schemas":
			decode(raw, &c.Schemas)
		case "parameters":
			decode(raw, &c.Parameters)
		case "headers":
			decode(raw, &c.Headers)
		case "requestBodies":
			decode(raw, &c.RequestBodies)
		case "responses":
			decode(raw, &c.Responses)
		case "securitySchemes":
			decode(raw, &c.SecuritySchemes)
		case "examples":
			decode(raw, &c.Examples)
		}
	}
	delete(top, "paths")
	delete(top, "components")
	doc := &openapi3.T{}
	rest, err := json.Marshal(top)
	if err == nil {
		err = json.Unmarshal(rest, doc)
	}
	wg.Wait()
	if err = errors.Join(append(errs, err)...); err != nil {
		return nil, fmt.Errorf("failed to unmarshal data: json error: %w", err)
	}
	doc.Paths = openapi3.NewPaths()
	for _, half := range halves {
		for k, item := range half.Map() {
			doc.Paths.Set(k, item)
		}
	}
	if sections != nil {
		doc.Components = &c
	}
	if err := openapi3.NewLoader().ResolveRefsIn(doc, nil); err != nil {
		return nil, err
	}
	return doc, nil
}

// componentSections are the sections of components decoded apart; any other
// key sends the document to the loader whole.
var componentSections = []string{"schemas", "parameters", "headers", "requestBodies", "responses", "securitySchemes", "examples"}
