package contract

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/problem"
)

// obj writes a JSON object of members in order.
func obj(members ...string) string { return "{" + strings.Join(members, ",") + "}" }

// repeat is n members or items made by f.
func repeat(n int, f func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func arr(items []string) string { return "[" + strings.Join(items, ",") + "]" }

// boundedCorpus are bodies past the list: many unknown members, in any
// order and nested, values of the wrong kind, arrays of many bad items
// (unique or not, with a duplicate late, past minItems and maxItems), and
// own file addresses the pattern waives among them.
func boundedCorpus() map[string][]string {
	unknown := func(i int) string { return fmt.Sprintf(`"x%02d":%d`, (i*37)%90, i) }
	gen := func(extra ...string) string {
		return obj(append([]string{`"modality":"image"`, `"model_id":"imagen-4"`, `"prompt":"a kite"`}, extra...)...)
	}
	bigObject := obj(repeat(60, unknown)...)
	return map[string][]string{
		"createGeneration": {
			obj(repeat(60, unknown)...),
			gen(repeat(45, unknown)...),
			gen(append(repeat(30, unknown), `"count":9`, `"aa":1`, `"zz":{"a":[1,2]}`, `"x05":"again"`)...),
			obj(`"prompt":`+bigObject, `"modality":[`+bigObject+`]`, `"model_id":`+arr(repeat(50, func(int) string { return "1" }))),
			gen(`"reference_asset_ids":` + arr(repeat(40, func(i int) string { return fmt.Sprint(-i) }))),
			gen(`"reference_image_urls":` + arr(repeat(30, func(i int) string {
				if i%3 == 0 {
					return fmt.Sprintf(`"http://127.0.0.1/files/a/%d.png"`, i)
				}
				return fmt.Sprintf(`"ftp://x/%d"`, i)
			}))),
			gen(`"reference_image_urls":` + arr(repeat(30, func(i int) string { return `"http://127.0.0.1/files/a/1.png"` }))),
			gen(`"reference_asset_ids":`+arr(repeat(40, func(i int) string { return "0" })), `"reference_asset_ids":[1]`),
		},
		"createPublication": {
			obj(`"asset_ids":`+arr(repeat(50, func(i int) string { return "0" })), `"caption":"c"`, `"platforms":["x"]`),
			obj(`"asset_ids":`+arr(append(repeat(45, func(i int) string { return fmt.Sprint(-i - 1) }), "-3")), `"caption":"c"`, `"platforms":["x"]`),
			obj(`"asset_ids":`+arr(append(repeat(45, func(i int) string { return fmt.Sprint(i + 1) }), "7")), `"caption":"c"`, `"platforms":["x"]`),
			obj(`"zz":1`, `"asset_ids":`+arr(append(repeat(45, func(i int) string { return fmt.Sprint(i + 1) }), "7", "-1")), `"caption":"c"`, `"platforms":["x"]`),
			obj(`"asset_ids":[1]`, `"caption":"c"`, `"platforms":`+arr(repeat(40, func(i int) string { return fmt.Sprintf(`"p%d"`, i%25) }))),
			obj(`"asset_ids":[1]`, `"caption":"c"`, `"options":`+obj(repeat(50, unknown)...), `"social_account_ids":[1]`),
		},
		"createEncoreCreation": {
			obj(append(repeat(40, unknown), `"effect":"golden-hour"`)...),
			obj(append(repeat(40, unknown), `"effect":"golden-hour"`, `"image_url":"https://x/y.jpg"`, `"asset_id":1`)...),
		},
		"createSandbox": {
			obj(`"keys":` + arr(repeat(60, func(int) string { return `{"name":"","scopes":[]}` }))),
			obj(`"keys":` + arr(repeat(60, func(i int) string {
				if i < 30 {
					return `{"name":"k","scopes":["read"]}`
				}
				return `{"name":"","scopes":["nope","read"],"extra":1}`
			}))),
			obj(`"aaa":1`, `"keys":`+arr(repeat(60, func(i int) string {
				if i%10 != 9 {
					return `{"name":"k","scopes":["read"]}`
				}
				return `{"name":""}`
			}))),
			obj(`"keys":`+arr(repeat(40, func(i int) string {
				return obj(append(repeat(25, unknown), `"scopes":`+arr(repeat(30, func(int) string { return `"bad"` })))...)
			})), `"monthly_gifts":`+arr(repeat(30, func(int) string { return `{"model_id":1}` }))),
			obj(`"keys":`+arr(repeat(40, func(int) string { return `{"name":""}` })), `"keys":[]`, `"name":`+bigObject),
			obj(`"keys":` + bigObject),
		},
		"forceResponses": {
			obj(`"operation":"getAccount"`, `"status":200`, `"body":`+obj(repeat(60, unknown)...)),
			obj(append(repeat(30, unknown), `"operation":"getAccount"`, `"status":200`, `"body":`+bigObject)...),
			obj(`"operation":"getAccount"`, `"status":200`, `"body":[1,2]`),
		},
		"addFaultRule": {
			obj(`"kind":"status"`, `"status":418`, `"drift":true`, `"body":`+obj(repeat(60, unknown)...)),
			obj(append(repeat(30, unknown), `"kind":"status"`, `"body":`+bigObject)...),
		},
		"addToken": {
			obj(`"name":"t"`, `"scopes":`+arr(repeat(50, func(int) string { return `"x"` }))),
		},
	}
}

// The bounded decode changes nothing of the validator's verdict but what
// it keeps: every body past the list gets the error the validator gives
// over the whole value (the same first violations, in the same order, the
// same count of the others), through every way a front hands a body in.
func TestBoundedDecodeIsExact(t *testing.T) {
	for _, name := range []string{"../../openapi.json", "../../control.json"} {
		c := parseFile(t, name)
		for op, bodies := range boundedCorpus() {
			if !c.Has(op) {
				continue
			}
			vars := map[string]string{"id": "1"}
			for _, b := range bodies {
				same(t, c, validateCase{op: op, vars: vars, query: nil, ct: "application/json", body: b})
				err := c.oracleValidateRequest(oracleRequest([]byte(b), "application/json", false, 0), op, vars, nil, ownFiles)
				if v, more, ok := problem.Of(err); ok && more > 0 {
					assert.Len(t, v, problem.MaxViolations, "%s: %.100s", op, b)
				}
			}
		}
	}
}

// Every JSON body of both documents is followed by the bounded decode all
// the way: no part of one is decoded whole, where a body of a million
// bad items would cost a violation each.
func TestEveryBodyIsBounded(t *testing.T) {
	for _, name := range []string{"../../openapi.json", "../../control.json"} {
		c := parseFile(t, name)
		n := 0
		for id, rules := range c.inputs {
			for mt, sh := range rules.shapes {
				var walk func(path string, sh *shape, seen map[*shape]bool)
				walk = func(path string, sh *shape, seen map[*shape]bool) {
					if sh == nil || seen[sh] {
						return
					}
					seen[sh] = true
					require.False(t, sh.whole, "%s %s: %s is decoded whole", name, id, path)
					if sh.props != nil || sh.kinds == "" || strings.Contains(sh.kinds, "{") {
						assert.True(t, sh.closed || sh.others != nil || sh.opaque, "%s %s: %s takes any member, kept whole", name, id, path)
					}
					for p, child := range sh.props {
						walk(path+"."+p, child, seen)
					}
					walk(path+".*", sh.others, seen)
					if strings.Contains(sh.kinds, "[") {
						require.NotNil(t, sh.items, "%s %s: %s has no items schema", name, id, path)
					}
					walk(path+"[]", sh.items, seen)
				}
				walk("body", sh, map[*shape]bool{})
				_ = mt
				n++
			}
		}
		t.Logf("%s: %d bodies", name, n)
		assert.NotZero(t, n)
	}
}

// allocated is what f allocates, in bytes.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A body of a million unknown members is refused for the cost of its
// bytes: read past, the first names kept and the others counted, in about
// a tenth of its size in allocations; the error lists the first twenty and
// the count. So is one of a hundred thousand bad items: the items past
// those the list needs are judged and let go.
func TestRefusingAHugeBodyCostsItsBytes(t *testing.T) {
	api := parseFile(t, "../../openapi.json")
	var b strings.Builder
	b.WriteString(`{"modality":"image","model_id":"imagen-4","prompt":"p"`)
	for i := range 1_000_000 {
		fmt.Fprintf(&b, `,"x%d":0`, i)
	}
	b.WriteString("}")
	body := b.String()
	var err error
	alloc := allocated(func() {
		in := &Input{Body: api.ReadBody("createGeneration", "application/json", strings.NewReader(body), int64(len(body)))}
		err = api.Validate("createGeneration", in, nil)
	})
	v, more, ok := problem.Of(err)
	require.True(t, ok, "%v", err)
	assert.Len(t, v, problem.MaxViolations)
	assert.Equal(t, "x0", v[0].Field)
	assert.Equal(t, "x1", v[1].Field)
	assert.Equal(t, "x10", v[2].Field, "in the order of their names")
	assert.Equal(t, 1_000_000-problem.MaxViolations, more)
	if !race {
		assert.Less(t, alloc, uint64(len(body))+uint64(len(body))/10, "reading the body, and little else: %d bytes for a body of %d", alloc, len(body))
	}

	control := parseFile(t, "../../control.json")
	bad := `{"keys":[` + strings.TrimSuffix(strings.Repeat(`{"name":"","scopes":[]},`, 100_000), ",") + `]}`
	in := &Input{Body: control.ReadBody("createSandbox", "application/json", strings.NewReader(bad), int64(len(bad)))}
	err = control.Validate("createSandbox", in, nil)
	v, more, ok = problem.Of(err)
	require.True(t, ok, "%v", err)
	assert.Len(t, v, problem.MaxViolations)
	assert.Equal(t, "keys[0].name", v[0].Field)
	assert.Equal(t, 200_000-problem.MaxViolations, more, "two violations an item, each counted")
	assert.LessOrEqual(t, len(in.Body.Value.(map[string]any)["keys"].([]any)), 2*problem.MaxViolations, "the items the list needs are kept, no more")
}
