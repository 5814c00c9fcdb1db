package contract

import "github.com/getkin/kin-openapi/openapi3"

// The service takes an image by a public https URL or a data URI
// (ImageSource, whose pattern says so). The mock also takes the addresses
// of its own files, which are http unless it serves https: a schema with
// x-own-file-urls lets the server's recognizer (Validate's own) waive its
// pattern for them. The recognizer belongs to the server: it knows its
// hosts.

// ownURL reports whether a pattern error is waived: its schema allows own
// file addresses and its value is one.
func ownURL(se *openapi3.SchemaError, own func(string) bool) bool {
	if own == nil || se.Schema == nil {
		return false
	}
	if allowed, _ := se.Schema.Extensions["x-own-file-urls"].(bool); !allowed {
		return false
	}
	s, ok := se.Value.(string)
	return ok && own(s)
}
