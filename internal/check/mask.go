package check

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mediamock/mediamock/internal/bearer"
)

// Tokens never reach a report, a log line or a recording: a credential is
// known by the digest of its token, and shown masked.
//
// The rule: a value is a secret when it is the value of a credential
// header (Authorization and Proxy-Authorization with any scheme or none,
// Cookie and Set-Cookie, any header whose name says token, key, secret,
// auth, session, password or the like), of a query parameter or JSON body
// field so named, or when it looks like a token: the fixtures' forms
// (mk_…, oat_…, sbc_…), a JWT, or a long run of mixed-case letters and
// digits. A secret is written as MaskValue writes it, wherever it appears
// in the text written.

// Bearer is the token of an Authorization header, or "".
func Bearer(authorization string) string {
	token, _ := bearer.Token(authorization)
	return token
}

// Digest identifies a token without keeping it.
func Digest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:12])
}

// minDigested is the shortest secret whose mask carries a digest: a
// digest of a short value (a one-time code, a short password) could be
// reversed by trying every value.
const minDigested = 16

// MaskValue is a secret as it is written: "***" and, for a value long
// enough that its digest gives nothing away, the first 8 hex digits of
// its SHA-256, so that two lines with the same credential can be told
// apart from lines with another. No character of the value is shown.
func MaskValue(v string) string {
	if len(v) < minDigested {
		return "***"
	}
	sum := sha256.Sum256([]byte(v))
	return "***" + hex.EncodeToString(sum[:4])
}

// schemes are the authentication schemes Mask shows: registered ones and
// those APIs commonly use. Any other first word may be part of a secret.
var schemes = []string{"basic", "bearer", "digest", "dpop", "hoba", "mutual", "negotiate", "ntlm", "oauth",
	"scram-sha-1", "scram-sha-256", "vapid", "token", "apikey", "api-key", "mac", "hawk", "jwt", "aws4-hmac-sha256"}

// Mask shows an Authorization header without its secret: its scheme, when
// it is a known one, and the rest masked ("Bearer ***1a2b3c4d"); "(none)"
// for no header.
func Mask(authorization string) string {
	a := strings.TrimSpace(authorization)
	if a == "" {
		return "(none)"
	}
	if s, rest, ok := strings.Cut(a, " "); ok && slices.Contains(schemes, strings.ToLower(s)) {
		return s + " " + MaskValue(strings.TrimSpace(rest))
	}
	return MaskValue(a)
}

// credentialName says whether a header, parameter or field name is one
// whose value is a secret.
func credentialName(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"token", "key", "secret", "auth", "sig", "pass", "pwd", "credential", "code", "jwt",
		"session", "cookie", "bearer", "access", "otp", "nonce"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// tokenForms are strings that look like tokens wherever they stand.
var tokenForms = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:mk|oat|sbc)_[A-Za-z0-9_-]{4,}|eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`)
})

// tokenChars are the characters of an opaque token.
var tokenChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._~+/=-]{16,}$`) })

// looksLikeToken says whether a whole value looks like an opaque token:
// a fixture form or a JWT, or at least 16 token characters mixing upper
// and lower case letters and digits, or 32 hex digits and more.
func looksLikeToken(v string) bool {
	if tokenForms().MatchString(v) {
		return true
	}
	if !tokenChars().MatchString(v) {
		return false
	}
	upper, lower, digit, hexOnly := false, false, false, len(v) >= 32
	for _, c := range v {
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9':
			digit = true
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			hexOnly = false
		}
	}
	return upper && lower && digit || hexOnly
}

// ScrubTokens masks every part of a text that has a token's form.
func ScrubTokens(text string) string {
	return tokenForms().ReplaceAllStringFunc(text, MaskValue)
}

// minSecret is the shortest secret masked wherever it appears in a text;
// a shorter one is masked only as the value of its header, parameter or
// field.
const minSecret = 8

// Secrets are the secrets one request carries, so that they can be masked
// in anything written about it.
type Secrets struct {
	values []string // longest first
}

// RequestSecrets collects the secrets of a request: from its credential
// headers (an Authorization's token, its Basic password, its parameters),
// its cookies, its query and its JSON body.
func RequestSecrets(h http.Header, q url.Values, body []byte) *Secrets {
	s := &Secrets{}
	seen := map[string]bool{}
	add := func(v string) {
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		if len(v) >= minSecret && !seen[v] {
			seen[v] = true
			s.values = append(s.values, v)
		}
	}
	for name, vs := range h {
		lower := strings.ToLower(name)
		cookie := lower == "cookie" || lower == "set-cookie"
		if !credentialName(name) && !cookie {
			for _, v := range vs {
				if looksLikeToken(strings.TrimSpace(v)) {
					add(v)
				}
			}
			continue
		}
		for _, v := range vs {
			add(v)
			if cookie {
				for _, part := range strings.Split(v, ";") {
					_, val, _ := strings.Cut(part, "=")
					add(val)
				}
				continue
			}
			sch, rest, ok := strings.Cut(strings.TrimSpace(v), " ")
			if !ok {
				continue
			}
			add(rest)
			if strings.EqualFold(sch, "basic") {
				if dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest)); err == nil {
					add(string(dec))
					_, pw, _ := strings.Cut(string(dec), ":")
					add(pw)
				}
			}
			for _, param := range strings.Split(rest, ",") {
				_, val, _ := strings.Cut(param, "=")
				add(val)
			}
		}
	}
	for name, vs := range q {
		for _, v := range vs {
			if credentialName(name) || looksLikeToken(v) {
				add(v)
				add(Bearer(v))
			}
		}
	}
	if len(body) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil {
			walkSecrets(v, false, add)
		}
	}
	sort.Slice(s.values, func(i, j int) bool { return len(s.values[i]) > len(s.values[j]) })
	return s
}

// walkSecrets adds the string values of credential-named fields and the
// values that look like tokens.
func walkSecrets(v any, named bool, add func(string)) {
	switch t := v.(type) {
	case map[string]any:
		for k, item := range t {
			walkSecrets(item, named || credentialName(k), add)
		}
	case []any:
		for _, item := range t {
			walkSecrets(item, named, add)
		}
	case string:
		if named || looksLikeToken(t) {
			add(t)
		}
		for _, m := range tokenForms().FindAllString(t, -1) {
			add(m)
		}
	}
}

// Scrub masks in a text every secret of the request, as sent and as
// escaped in an address, and every token form.
func (s *Secrets) Scrub(text string) string {
	if s != nil {
		for _, v := range s.values {
			for _, form := range []string{v, url.QueryEscape(v), url.PathEscape(v)} {
				if strings.Contains(text, form) {
					text = strings.ReplaceAll(text, form, MaskValue(v))
				}
			}
		}
	}
	return ScrubTokens(text)
}

// ScrubAll masks the secrets in every string of a decoded JSON value, in
// place, and returns it.
func (s *Secrets) ScrubAll(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, item := range t {
			if str, ok := item.(string); ok && credentialName(k) && str != "" {
				t[k] = MaskValue(str)
				continue
			}
			t[k] = s.ScrubAll(item)
		}
	case []any:
		for i, item := range t {
			t[i] = s.ScrubAll(item)
		}
	case string:
		return s.Scrub(t)
	}
	return v
}

// SafeQuery is a query with the values of credential-named parameters,
// the values that look like tokens and the request's secrets masked, its
// keys in order.
func SafeQuery(q url.Values, s *Secrets) string {
	if len(q) == 0 {
		return ""
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, v := range q[k] {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(url.QueryEscape(s.Scrub(k)))
			b.WriteByte('=')
			if credentialName(k) || looksLikeToken(v) || strings.HasPrefix(strings.ToLower(v), "bearer") {
				b.WriteString(MaskValue(v)) // unescaped: a mask is plain
				continue
			}
			b.WriteString(strings.ReplaceAll(url.QueryEscape(s.Scrub(v)), "%2A%2A%2A", "***"))
		}
	}
	return b.String()
}

// SafePath is a path with its segments that look like tokens and the
// request's secrets masked.
func SafePath(path string, s *Secrets) string {
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if looksLikeToken(seg) {
			segs[i] = MaskValue(seg)
		}
	}
	return s.Scrub(strings.Join(segs, "/"))
}
