package oauth

import (
	"slices"
	"strings"
)

// The protected resources of the server, and the resource indicators a
// client may bind its tokens to (RFC 8707).

// Resources are the protected resources of the server, by their path:
// the MCP server and the REST API; the root names the whole service.
func resources(root string) []string {
	return []string{root + "/mcp", root + "/api/v1", root}
}

// audience is what a token issued for resource indicators reaches: the
// paths of the protected resources they name ("/mcp", "/api/v1"), or nil
// for every one (no indicator, the root, or both resources). ok is false
// when one is not this server's.
func audience(root string, indicators []string) (paths []string, bad string) {
	for _, r := range indicators {
		if !resourceAllowed(root, r) {
			return nil, r
		}
		p := strings.TrimPrefix(strings.TrimSuffix(r, "/"), root)
		if p == "" {
			return nil, "" // the whole service
		}
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	if len(paths) == len(resources(root))-1 {
		return nil, "" // every resource: bound to none
	}
	slices.Sort(paths)
	return paths, ""
}

// within reports whether a token request's audience is one the grant
// allows: a grant bound to no resource allows any.
func within(want, granted []string) bool {
	if len(granted) == 0 {
		return true
	}
	if len(want) == 0 {
		return false
	}
	for _, p := range want {
		if !slices.Contains(granted, p) {
			return false
		}
	}
	return true
}

// resourceAllowed reports whether a resource indicator names this server.
func resourceAllowed(root, resource string) bool {
	resource = strings.TrimSuffix(resource, "/")
	return slices.Contains(resources(root), resource)
}
