package contract

import (
	"context"

	"github.com/getkin/kin-openapi/openapi3"
)

// The service takes an image by a public https URL or a data URI
// (ImageSource, whose pattern says so). The mock also takes the addresses
// of its own files, which are http unless it serves https: a schema with
// x-own-file-urls lets the request's recognizer waive its pattern for
// them. The recognizer belongs to the server (it knows its hosts); it
// travels in the request's context.

type ownURLsKey struct{}

// WithOwnURLs returns ctx carrying own, which recognizes the server's own
// file addresses.
func WithOwnURLs(ctx context.Context, own func(string) bool) context.Context {
	return context.WithValue(ctx, ownURLsKey{}, own)
}

func ownURLsOf(ctx context.Context) func(string) bool {
	own, _ := ctx.Value(ownURLsKey{}).(func(string) bool)
	return own
}

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
