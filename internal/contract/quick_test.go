package contract

import (
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQuickCheckNeverAcceptsWhatTheValidatorRefuses tries every parameter
// of every operation with a fast path with values at and around its
// rules: whatever the fast path accepts, the validator must accept too.
// The fast path only saves work; it must never let a request through.
func TestQuickCheckNeverAcceptsWhatTheValidatorRefuses(t *testing.T) {
	for _, name := range []string{"../../openapi.json", "../../control.json"} {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		c, err := Parse(name, data)
		require.NoError(t, err)
		require.NotEmpty(t, c.quick, "%s: no operation has a fast path", name)
		values := []string{"", "0", "1", "-1", "2", "20", "50", "51", "55", "56", "-0", "01", "+1", "1.0", "1e1", " 1",
			"9223372036854775807", "9223372036854775808", "-9223372036854775809", "abc", "image", "IMAGE", "queued",
			"voice", strings.Repeat("x", 200), strings.Repeat("x", 201), strings.Repeat("é", 200), strings.Repeat("é", 201), "\xff"}
		accepted := 0
		for id, q := range c.quick {
			route := c.routes[id]
			for _, p := range q.params {
				for _, enum := range p.enum {
					values = append(values, enum)
				}
			}
			for _, p := range q.params {
				for _, v := range values {
					vars, query := map[string]string{}, url.Values{}
					for _, o := range q.params { // the others at a valid value, or left out
						if o.in == "path" {
							vars[o.name] = "1"
						}
					}
					if p.in == "path" {
						vars[p.name] = v
					} else {
						query[p.name] = []string{v}
					}
					r := httptest.NewRequest(route.Method, "/x?"+query.Encode(), nil)
					if !q.accepts(vars, query) {
						continue
					}
					accepted++
					err := c.ValidateRequest(r, id, vars, query)
					require.NoError(t, err, "%s %s: %s=%q passes the fast path but not the validator", name, id, p.name, v)
				}
			}
		}
		require.NotZero(t, accepted, name)
	}
}

// TestQuickCheckDefersWhatItIsNotSureOf sends what the fast path leaves to
// the validator: a repeated or empty value, a value out of bounds, a
// missing path parameter.
func TestQuickCheckDefersWhatItIsNotSureOf(t *testing.T) {
	data, err := os.ReadFile("../../openapi.json")
	require.NoError(t, err)
	c, err := Parse("openapi.json", data)
	require.NoError(t, err)
	list, get := c.quick["listAssets"], c.quick["getGeneration"]
	require.NotNil(t, list)
	require.NotNil(t, get)
	require.True(t, list.accepts(nil, url.Values{"limit": {"20"}, "kind": {"image"}, "unknown": {"x"}}))
	require.True(t, list.accepts(nil, url.Values{}))
	for _, q := range []url.Values{{"limit": {"20", "21"}}, {"limit": {""}}, {"limit": {"51"}}, {"limit": {"0"}}, {"kind": {"gif"}}, {"limit": {"2.0"}}} {
		require.False(t, list.accepts(nil, q), "%v", q)
	}
	require.True(t, get.accepts(map[string]string{"id": "7"}, url.Values{"wait_seconds": {"55"}}))
	require.False(t, get.accepts(map[string]string{}, url.Values{}))
	require.False(t, get.accepts(map[string]string{"id": "7"}, url.Values{"wait_seconds": {"56"}}))
}
