package routes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Route is one operation of an OpenAPI document as a table routes it: its
// method, its path (relative to the document's base, as the document
// writes it: /sandboxes/{sandbox}) and its operationId.
type Route struct {
	Method, Path, ID string
}

// methods are the keys of a path item that name an operation.
var methods = map[string]string{"get": http.MethodGet, "put": http.MethodPut, "post": http.MethodPost, "delete": http.MethodDelete,
	"options": http.MethodOptions, "head": http.MethodHead, "patch": http.MethodPatch, "trace": http.MethodTrace}

// Read reads the routes of an OpenAPI document, in the order its bytes
// hold them, without parsing the rest of it: a table is made before the
// document is parsed (a server answers its health check without parsing
// control.json). An operation without an operationId is an error.
func Read(document []byte) ([]Route, error) {
	dec := json.NewDecoder(bytes.NewReader(document))
	if err := open(dec, '{'); err != nil {
		return nil, err
	}
	var out []Route
	for dec.More() {
		key, err := name(dec)
		if err != nil {
			return nil, err
		}
		if key != "paths" {
			if err := skip(dec); err != nil {
				return nil, err
			}
			continue
		}
		if out, err = readPaths(dec); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readPaths reads the paths object, each path's operations in order.
func readPaths(dec *json.Decoder) ([]Route, error) {
	if err := open(dec, '{'); err != nil {
		return nil, err
	}
	var out []Route
	for dec.More() {
		path, err := name(dec)
		if err != nil {
			return nil, err
		}
		if err := open(dec, '{'); err != nil {
			return nil, fmt.Errorf("path %s: %w", path, err)
		}
		for dec.More() {
			key, err := name(dec)
			if err != nil {
				return nil, err
			}
			method, ok := methods[key]
			if !ok { // parameters, summary, x-...
				if err := skip(dec); err != nil {
					return nil, err
				}
				continue
			}
			var op struct {
				OperationID string `json:"operationId"`
			}
			if err := dec.Decode(&op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			if op.OperationID == "" {
				return nil, fmt.Errorf("%s %s has no operationId", method, path)
			}
			out = append(out, Route{Method: method, Path: path, ID: op.OperationID})
		}
		if _, err := dec.Token(); err != nil { // }
			return nil, err
		}
	}
	_, err := dec.Token()
	return out, err
}

// open reads the opening delimiter of an object.
func open(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != d {
		return fmt.Errorf("expected %v, found %v", d, t)
	}
	return nil
}

// name reads an object's key.
func name(dec *json.Decoder) (string, error) {
	t, err := dec.Token()
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", errors.New("expected a key")
	}
	return s, nil
}

// skip reads past a value.
func skip(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}

// TableOf is the sealed table of routes under prefix.
func TableOf(prefix string, rs []Route) *Table {
	t := New(prefix)
	for _, r := range rs {
		t.Add(r.Method, r.Path, r.ID)
	}
	return t.Seal()
}

// Check holds the routes of a document against the operations a program
// serves (served: the operationIds it has a handler for): every operation
// has a handler, and every handler an operation. what names the document
// in the error.
func Check(what string, rs []Route, served []string) error {
	has := map[string]bool{}
	for _, r := range rs {
		has[r.ID] = true
	}
	handled := map[string]bool{}
	for _, id := range served {
		if handled[id] {
			return fmt.Errorf("operation %s of %s has two handlers", id, what)
		}
		handled[id] = true
	}
	var missing, extra []string
	for _, r := range rs {
		if !handled[r.ID] {
			missing = append(missing, r.ID)
		}
	}
	for _, id := range served {
		if !has[id] {
			extra = append(extra, id)
		}
	}
	switch {
	case len(missing) > 0:
		return fmt.Errorf("operations of %s without a handler: %s", what, strings.Join(missing, ", "))
	case len(extra) > 0:
		return fmt.Errorf("handlers that serve no operation of %s: %s", what, strings.Join(extra, ", "))
	}
	return nil
}
