package proxy_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
	"github.com/mediamock/mediamock/internal/proxy"
)

// headerForms are the ways a client may send its token: every one of them
// is masked wherever the proxy writes.
var headerForms = []struct {
	name string
	set  func(h http.Header, token string)
}{
	{"bearer", func(h http.Header, tok string) { h.Set("Authorization", "Bearer "+tok) }},
	{"bearer lower case, spaces", func(h http.Header, tok string) { h.Set("Authorization", "bearer   "+tok+" ") }},
	{"no scheme", func(h http.Header, tok string) { h.Set("Authorization", tok) }},
	{"token scheme", func(h http.Header, tok string) { h.Set("Authorization", "Token "+tok) }},
	{"basic", func(h http.Header, tok string) {
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("api:"+tok)))
	}},
	{"digest-like parameters", func(h http.Header, tok string) { h.Set("Authorization", `Digest username="u", response="`+tok+`"`) }},
	{"proxy-authorization", func(h http.Header, tok string) { h.Set("Proxy-Authorization", "Bearer "+tok) }},
	{"cookie", func(h http.Header, tok string) { h.Set("Cookie", "lang=en; session="+tok) }},
	{"x-api-key", func(h http.Header, tok string) { h.Set("X-Api-Key", tok) }},
	{"x-auth-token", func(h http.Header, tok string) { h.Set("X-Auth-Token", tok) }},
}

// queryShapes put the token in the address too.
var queryShapes = []func(token string) string{
	func(string) string { return "/account" },
	func(tok string) string { return "/assets?q=" + url.QueryEscape(tok) },
	func(tok string) string { return "/account?access=" + url.QueryEscape(tok) },
	func(tok string) string { return "/account?jwt=" + url.QueryEscape(tok) },
	func(tok string) string { return "/account?pass=" + url.QueryEscape(tok) },
	func(tok string) string { return "/assets?starting_after=" + url.QueryEscape(tok) },
	func(tok string) string { return "/assets?limit=" + url.QueryEscape(tok) + "&modality=x" },
	func(tok string) string { return "/account?next=" + url.QueryEscape("https://example.com/cb?k="+tok) },
	func(tok string) string { return "/account?auth=" + url.QueryEscape("Bearer "+tok) },
}

// TestNoTokenIsWritten sends a token in every header form and query shape
// (and in a path and a JSON body) through three proxies: one that reports
// every exchange, one that records, one whose upstream is down (so it
// logs). No report line, log line or recording holds the token.
func TestNoTokenIsWritten(t *testing.T) {
	srv := mediamock.RunT(t)
	dir := filepath.Join(t.TempDir(), "recording")
	every := startProxy(t, srv.BaseURL(), func(o *proxy.Options) { o.MaxValidateBytes = 8 }) // every answer is "not fully checked": a line each
	rec := startProxy(t, srv.BaseURL(), func(o *proxy.Options) { o.RecordDir = dir })
	down := startProxy(t, "http://127.0.0.1:1/api/v1")

	// A key of the fixture, accepted by the mock, and a token of no known form.
	tokens := []string{mediamock.KeyAllScopes, "Zq81vX0pLm4nR7tY2wK9"}
	send := func(f *front, method, path string, hf int, tok, body string) {
		t.Helper()
		req, err := http.NewRequest(method, f.base()+path, strings.NewReader(body))
		require.NoError(t, err)
		headerForms[hf].set(req.Header, tok)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := f.srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	for _, tok := range tokens {
		for hf := range headerForms {
			for _, q := range queryShapes {
				for _, f := range []*front{every, rec, down} {
					send(f, http.MethodGet, q(tok), hf, tok, "")
				}
			}
			for _, f := range []*front{every, rec, down} {
				send(f, http.MethodGet, "/assets/"+tok, hf, tok, "")
				send(f, http.MethodPost, "/generations", hf, tok,
					`{"modality":"`+tok+`","model_id":"`+tok+`","prompt":"my key is `+tok+`","api_key":"`+tok+`","password":"`+tok+`"}`)
			}
		}
	}
	require.NoError(t, rec.p.Close())
	recording, err := os.ReadFile(filepath.Join(dir, proxy.FixtureFile))
	require.NoError(t, err)

	assert.Len(t, every.lines(t), len(tokens)*len(headerForms)*(len(queryShapes)+2), "a line for every exchange")
	assert.NotEmpty(t, down.log.String())
	outputs := map[string]string{"report": every.report.String(), "log": every.log.String(),
		"recording report": rec.report.String(), "recording log": rec.log.String(), "recording": string(recording),
		"down report": down.report.String(), "down log": down.log.String()}
	for _, tok := range tokens {
		basic := base64.StdEncoding.EncodeToString([]byte("api:" + tok))
		for name, out := range outputs {
			for _, secret := range []string{tok, url.QueryEscape(tok), basic, tok[:10]} {
				if n := strings.Count(out, secret); n > 0 {
					t.Errorf("%s holds %q %d times", name, secret, n)
				}
			}
		}
	}
}
