package oauth

import (
	"net/http"

	"github.com/mediamock/mediamock/internal/edge"
)

// The metadata a client discovers the server by: the protected resources'
// (RFC 9728) and the authorization server's (RFC 8414).

// resourceMetadata serves the metadata of the protected resource at path
// (RFC 9728): /mcp, /api/v1, or the root for the whole service.
func (s *Server) resourceMetadata(w *edge.Writer, r *http.Request, root, path string) {
	if !only(w, r, http.MethodGet) {
		return
	}
	resource := root + path
	if !resourceAllowed(root, resource) {
		oauthError(w, http.StatusNotFound, "invalid_request", "No protected resource at "+path+": the resources are /mcp and /api/v1.")
		return
	}
	edge.WriteJSON(w, http.StatusOK, map[string]any{
		"resource":                 resource,
		"authorization_servers":    []string{root},
		"scopes_supported":         Scopes,
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "Media generation service (mock)",
	})
}

// serverMetadata is the authorization server's metadata (RFC 8414).
func (s *Server) serverMetadata(root string) map[string]any {
	return map[string]any{
		"issuer":                           root,
		"authorization_endpoint":           root + AuthorizePath,
		"token_endpoint":                   root + TokenPath,
		"registration_endpoint":            root + RegisterPath,
		"revocation_endpoint":              root + RevokePath,
		"scopes_supported":                 Scopes,
		"response_types_supported":         []string{"code"},
		"response_modes_supported":         []string{"query"},
		"grant_types_supported":            []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported": []string{"S256"},
		// The authorization response names the issuer (RFC 9207).
		"authorization_response_iss_parameter_supported": true,
		"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_post", "client_secret_basic"},
		"revocation_endpoint_auth_methods_supported":     []string{"none", "client_secret_post", "client_secret_basic"},
	}
}
