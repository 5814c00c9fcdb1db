package gate

import (
	"github.com/mediamock/mediamock/internal/bearer"
	"github.com/mediamock/mediamock/sim"
)

// Challenge is the WWW-Authenticate header of a refusal for its
// credential (RFC 6750, section 3): a bare Bearer challenge when the
// request sent no bearer token (no Authorization header, or another
// scheme), error="invalid_token" when it sent one the service does not
// know, error="insufficient_scope" with the scope required when the token
// lacks it; "" for any other error.
func Challenge(authorization string, err error) string {
	e := sim.AsError(err)
	switch {
	case e.Kind == sim.EUNAUTHORIZED:
		if token, ok := bearer.Token(authorization); !ok || token == "" {
			return `Bearer realm="api"`
		}
		return `Bearer realm="api", error="invalid_token"`
	case e.Code == "insufficient_scope":
		if scope, ok := e.Details["required_scope"].(string); ok {
			return `Bearer realm="api", error="insufficient_scope", scope="` + scope + `"`
		}
	}
	return ""
}
