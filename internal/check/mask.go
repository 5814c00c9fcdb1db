package check

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
)

// Tokens never reach a report, a log line or a recording: a credential is
// known by the digest of its token, and shown masked.

// Bearer is the token of an Authorization header, or "".
func Bearer(authorization string) string {
	if len(authorization) > 7 && strings.EqualFold(authorization[:7], "bearer ") {
		return strings.TrimSpace(authorization[7:])
	}
	return ""
}

// Digest identifies a token without keeping it.
func Digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:12])
}

// Mask shows an Authorization header without its secret: "Bearer mk_…abcd"
// (the token's prefix up to its first underscore and its last four
// characters, only when the token is long enough to keep most of it
// hidden), "Bearer …" for a short token, "(none)" for no header, and the
// scheme alone for any other kind of credential.
func Mask(authorization string) string {
	if authorization == "" {
		return "(none)"
	}
	token := Bearer(authorization)
	if token == "" {
		scheme, _, _ := strings.Cut(strings.TrimSpace(authorization), " ")
		if len(scheme) > 16 {
			scheme = scheme[:16]
		}
		return scheme + " …"
	}
	if len(token) < 16 {
		return "Bearer …"
	}
	prefix := ""
	if i := strings.IndexByte(token, '_'); i > 0 && i <= 4 {
		prefix = token[:i+1]
	}
	return "Bearer " + prefix + "…" + token[len(token)-4:]
}

// secretParam names query parameters whose values are never shown.
func secretParam(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"token", "key", "secret", "auth", "sig", "password", "credential", "code"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// SafeQuery is a query with the values of secret-looking parameters
// replaced, and any value that holds a known token masked.
func SafeQuery(q url.Values, token string) string {
	if len(q) == 0 {
		return ""
	}
	out := url.Values{}
	for k, vs := range q {
		for _, v := range vs {
			if secretParam(k) || (token != "" && strings.Contains(v, token)) || strings.HasPrefix(strings.ToLower(v), "bearer") {
				v = "redacted"
			}
			out.Add(k, v)
		}
	}
	return out.Encode()
}
