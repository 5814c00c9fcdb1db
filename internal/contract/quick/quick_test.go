package quick_test

import (
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/contract/quick"
)

func parse(t testing.TB, name string) *contract.Contract {
	t.Helper()
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	c, err := contract.Parse(name, data)
	require.NoError(t, err)
	return c
}

// check is the fast path of an operation, and the parameters it judges.
func check(c *contract.Contract, opID string) (*quick.Check, []*openapi3.Parameter) {
	route := c.Route(opID)
	q := quick.New(route.Operation, route.PathItem)
	var params []*openapi3.Parameter
	for _, ref := range append(slices.Clone(route.PathItem.Parameters), route.Operation.Parameters...) {
		params = append(params, ref.Value)
	}
	return q, params
}

// TestQuickCheckNeverAcceptsWhatTheValidatorRefuses tries every parameter
// of every operation with a fast path with values at and around its
// rules: whatever the fast path accepts, the validator must accept too.
// The fast path only saves work; it must never let a request through.
func TestQuickCheckNeverAcceptsWhatTheValidatorRefuses(t *testing.T) {
	for _, name := range []string{"../../../openapi.json", "../../../control.json"} {
		c := parse(t, name)
		values := []string{"", "0", "1", "-1", "2", "20", "50", "51", "55", "56", "-0", "01", "+1", "1.0", "1e1", " 1",
			"9223372036854775807", "9223372036854775808", "-9223372036854775809", "abc", "image", "IMAGE", "queued",
			"voice", strings.Repeat("x", 200), strings.Repeat("x", 201), strings.Repeat("é", 200), strings.Repeat("é", 201), "\xff"}
		checks, accepted := 0, 0
		for _, op := range c.Operations() {
			q, params := check(c, op.ID)
			if q == nil {
				continue
			}
			checks++
			for _, p := range params {
				for _, v := range p.Schema.Value.Enum {
					if s, ok := v.(string); ok {
						values = append(values, s)
					}
				}
			}
			for _, p := range params {
				for _, v := range values {
					vars, query := map[string]string{}, url.Values{}
					for _, o := range params { // the others at a valid value, or left out
						if o.In == "path" {
							vars[o.Name] = "1"
						}
					}
					if p.In == "path" {
						vars[p.Name] = v
					} else {
						query[p.Name] = []string{v}
					}
					if !q.Accepts(vars, query) {
						continue
					}
					accepted++
					err := c.Validate(op.ID, &contract.Input{Path: vars, Query: query}, nil)
					require.NoError(t, err, "%s %s: %s=%q passes the fast path but not the validator", name, op.ID, p.Name, v)
				}
			}
		}
		require.NotZero(t, checks, "%s: no operation has a fast path", name)
		require.NotZero(t, accepted, name)
	}
}

// TestQuickCheckDefersWhatItIsNotSureOf sends what the fast path leaves to
// the validator: a repeated or empty value, a value out of bounds, a
// missing path parameter.
func TestQuickCheckDefersWhatItIsNotSureOf(t *testing.T) {
	c := parse(t, "../../../openapi.json")
	list, _ := check(c, "listAssets")
	get, _ := check(c, "getGeneration")
	require.NotNil(t, list)
	require.NotNil(t, get)
	require.True(t, list.Accepts(nil, url.Values{"limit": {"20"}, "kind": {"image"}, "unknown": {"x"}}))
	require.True(t, list.Accepts(nil, url.Values{}))
	for _, q := range []url.Values{{"limit": {"20", "21"}}, {"limit": {""}}, {"limit": {"51"}}, {"limit": {"0"}}, {"kind": {"gif"}}, {"limit": {"2.0"}}} {
		require.False(t, list.Accepts(nil, q), "%v", q)
	}
	require.True(t, get.Accepts(map[string]string{"id": "7"}, url.Values{"wait_seconds": {"55"}}))
	require.False(t, get.Accepts(map[string]string{}, url.Values{}))
	require.False(t, get.Accepts(map[string]string{"id": "7"}, url.Values{"wait_seconds": {"56"}}))
	require.False(t, get.Accepts(map[string]string{"id": "7"}, nil), "no query: the validator judges")
}

// BenchmarkParameters is what the fast path saves: the parameters of a
// list page and of a long poll judged by the fast path, and by the
// validator it falls back to.
//
//	go test -run '^$' -bench Parameters -benchmem ./internal/contract/quick/
func BenchmarkParameters(b *testing.B) {
	c := parse(b, "../../../openapi.json")
	for _, tc := range []struct {
		name, op string
		vars     map[string]string
		query    url.Values
	}{
		{"list page", "listAssets", nil, url.Values{"limit": {"20"}}},
		{"filtered list page", "listAssets", nil, url.Values{"limit": {"20"}, "kind": {"image"}, "status": {"completed"}}},
		{"long poll", "getGeneration", map[string]string{"id": "61"}, url.Values{"wait_seconds": {"30"}}},
	} {
		q, _ := check(c, tc.op)
		require.True(b, q.Accepts(tc.vars, tc.query))
		b.Run(tc.name+"/quick", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !q.Accepts(tc.vars, tc.query) {
					b.Fatal("refused")
				}
			}
		})
		b.Run(tc.name+"/validator", func(b *testing.B) {
			b.ReportAllocs()
			in := &contract.Input{Path: tc.vars, Query: tc.query}
			for b.Loop() {
				if err := c.Validate(tc.op, in, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
