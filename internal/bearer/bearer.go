// Package bearer reads the credential of an Authorization header, the one
// place every door (the API, MCP, the control API and the control MCP
// server, the checker's masks) parses its scheme:
//
//	token, ok := bearer.Token(r.Header.Get("Authorization"))
//
// It imports nothing of the project.
package bearer

import "strings"

// Token is the token of an Authorization header value whose scheme is
// Bearer (RFC 6750, section 2.1), in any case: "Bearer", "bearer" and
// "BEARER" are one scheme (RFC 9110, section 11.1). What follows the
// scheme's space is the token, without the spaces around it ("" when
// nothing follows); ok is false for another scheme or a value without a
// space after the scheme. A token holding a space is returned as it is,
// for the caller to refuse.
func Token(authorization string) (token string, ok bool) {
	scheme, rest, found := strings.Cut(strings.TrimLeft(authorization, " \t"), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.Trim(rest, " \t"), true
}
