package evolve

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/seed"
)

const generation = `{"object":"generation","status":"processing","assets":[` +
	`{"id":61,"object":"asset","kind":"image","status":"completed","credits":6,"cost":1.50,"big":12345678901234567890,"prompt":"a <fox> & \"snow\"","model":"flux-2-pro"},` +
	`{"id":62,"object":"asset","kind":"image","status":"processing","credits":6,"url":null}]}`

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&v), "%s", b)
	return v
}

// Every object gains one field, and nothing declared goes or changes
// but the one value of each evolvable enum.
func TestBodyAddsAFieldToEveryObject(t *testing.T) {
	out, added := Body([]byte(generation), 200, Options{Fields: true}, seed.New(1))
	v := decode(t, out)
	assets := v["assets"].([]any)
	for i, obj := range []map[string]any{v, assets[0].(map[string]any), assets[1].(map[string]any)} {
		var news []string
		for _, f := range NewFields {
			if _, ok := obj[f.Name]; ok {
				news = append(news, f.Name)
			}
		}
		assert.Len(t, news, 1, "object %d gained one new field", i)
	}
	assert.Len(t, added, 3)
	assert.Regexp(t, `^\$\.assets\[0\]\.[a-z_]+$`, added[0], "paths name the field")
	// Declared values are untouched, to the digit and the escape.
	want := decode(t, []byte(generation))
	for k, w := range want {
		if k != "assets" {
			assert.Equal(t, w, v[k], k)
		}
	}
	a0 := assets[0].(map[string]any)
	assert.Equal(t, json.Number("1.50"), a0["cost"])
	assert.Equal(t, json.Number("12345678901234567890"), a0["big"])
	assert.Equal(t, `a <fox> & "snow"`, a0["prompt"])
	assert.Contains(t, string(out), `"a <fox> & \"snow\""`, "HTML is not escaped, as the server writes it")
	assert.Contains(t, string(out), `"url":null`)
}

func TestBodyEnums(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		want       []string // the added entries, in order
	}{
		{"a running job's status, one kind", generation, 200,
			[]string{"$.status: moderating (was processing)", "$.assets[0].kind: sticker (was image)"}},
		{"a terminal status never changes", `{"object":"generation","status":"completed","assets":[]}`, 200, nil},
		{"failed neither", `{"status":"failed"}`, 200, nil},
		{"a publication in flight", `{"object":"publication","status":"publishing","deliveries":[{"status":"published"}]}`, 200,
			[]string{"$.status: awaiting_review (was publishing)"}},
		{"a model's modality", `{"data":[{"id":"m","modality":"video"}]}`, 200, []string{"$.data[0].modality: avatar (was video)"}},
		{"a key that is not a name", `{"modalities":{"3d":[{"modality":"3d"}]}}`, 200, []string{"$.modalities['3d'][0].modality: avatar (was 3d)"}},
		{"an error code, by status", `{"error":{"code":"insufficient_credits","message":"No.","details":{"code":"x","kind":"image"}}}`, 402,
			[]string{"$.error.code: credits_on_hold (was insufficient_credits)"}},
		{"an error code of an unlisted status", `{"error":{"code":"teapot","message":"No."}}`, 418,
			[]string{"$.error.code: request_rejected (was teapot)"}},
		{"a code outside the error object stays", `{"code":"abc"}`, 400, nil},
		{"a value outside the enum stays", `{"kind":"brand_kit","modality":"smell"}`, 200, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, added := Body([]byte(tc.body), tc.status, Options{Enums: true}, seed.New(7))
			assert.Equal(t, tc.want, added)
			if tc.want == nil {
				assert.JSONEq(t, tc.body, string(out))
			}
		})
	}
}

// One occurrence of each enum changes, drawn: over many draws, each
// candidate is picked.
func TestBodyEnumOccurrenceIsDrawn(t *testing.T) {
	body := `{"data":[{"kind":"image"},{"kind":"video"},{"kind":"music"}]}`
	seen := map[string]bool{}
	for s := range uint64(50) {
		_, added := Body([]byte(body), 200, Options{Enums: true}, seed.New(s))
		require.Len(t, added, 1)
		seen[added[0][:len("$.data[0]")]] = true
	}
	assert.Len(t, seen, 3)
}

func TestBodyReorder(t *testing.T) {
	body := `{"a":1,"b":{"x":1,"y":2},"c":[{"p":1,"q":2,"r":3}]}`
	for s := range uint64(20) {
		out, added := Body([]byte(body), 200, Options{Reorder: true}, seed.New(s))
		assert.Equal(t, []string{"keys reordered"}, added)
		assert.JSONEq(t, body, string(out), "the same document")
		assert.NotEqual(t, body, string(out), "in another order")
		var top []string
		dec := json.NewDecoder(strings.NewReader(string(out)))
		dec.Token()
		for dec.More() {
			k, _ := dec.Token()
			top = append(top, k.(string))
			var skip json.RawMessage
			dec.Decode(&skip)
		}
		assert.NotEqual(t, []string{"a", "b", "c"}, top, "every object of two keys or more changes order")
	}
}

func TestBodyIsDeterministic(t *testing.T) {
	a, addedA := Body([]byte(generation), 200, All(), seed.New(42))
	b, addedB := Body([]byte(generation), 200, All(), seed.New(42))
	c, _ := Body([]byte(generation), 200, All(), seed.New(43))
	assert.Equal(t, string(a), string(b))
	assert.Equal(t, addedA, addedB)
	assert.NotEqual(t, string(a), string(c), "another draw, another evolution")
}

func TestBodyLeavesOtherBodiesAlone(t *testing.T) {
	for _, body := range []string{"", "not json", `{"a":1} {"b":2}`, `{"a":`, "\x89PNG"} {
		out, added := Body([]byte(body), 200, All(), seed.New(1))
		assert.Equal(t, body, string(out))
		assert.Empty(t, added)
	}
	out, added := Body([]byte(`[1,"two",null]`), 200, All(), seed.New(1))
	assert.Equal(t, `[1,"two",null]`, string(out), "no object, nothing to add")
	assert.Empty(t, added)
}

func TestBodyCapsTheList(t *testing.T) {
	items := slices.Repeat([]string{`{"id":1}`}, 200)
	_, added := Body([]byte(`{"data":[`+strings.Join(items, ",")+`]}`), 200, Options{Fields: true}, seed.New(1))
	require.Len(t, added, MaxAdded)
	assert.Equal(t, "... and 138 more", added[MaxAdded-1])
}

func TestHeaders(t *testing.T) {
	counts := map[string]int{}
	for s := range uint64(40) {
		h := http.Header{"X-Request-Id": {"req_1"}}
		added := Headers(h, All(), seed.New(s))
		require.NotEmpty(t, added, "at least one header")
		for _, a := range added {
			name := strings.TrimPrefix(a, "header ")
			assert.NotEmpty(t, h.Get(name))
			counts[name]++
		}
		assert.Equal(t, "req_1", h.Get("X-Request-Id"))
	}
	assert.Len(t, counts, len(NewHeaders), "each header is drawn sometimes")
	assert.Empty(t, Headers(http.Header{}, Options{Fields: true}, seed.New(1)), "off")
}

// The names a release adds are new: openapi.json declares none of them,
// as a property or as a header.
func TestNewNamesAreUndeclared(t *testing.T) {
	doc, err := os.ReadFile("../../openapi.json")
	require.NoError(t, err)
	var root any
	require.NoError(t, json.Unmarshal(doc, &root))
	declared := map[string]bool{}
	var walk func(any)
	walk = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			for _, key := range []string{"properties", "headers"} {
				if props, ok := n[key].(map[string]any); ok {
					for name := range props {
						declared[strings.ToLower(name)] = true
					}
				}
			}
			if name, ok := n["name"].(string); ok {
				declared[strings.ToLower(name)] = true
			}
			for _, v := range n {
				walk(v)
			}
		case []any:
			for _, v := range n {
				walk(v)
			}
		}
	}
	walk(root)
	require.True(t, declared["status"] && declared["x-request-id"], "the walk finds declared names")
	for _, f := range NewFields {
		assert.False(t, declared[f.Name], f.Name)
	}
	for _, h := range NewHeaders {
		assert.False(t, declared[strings.ToLower(h.Name)], h.Name)
	}
	for _, v := range []string{NewJobStatus, NewPublicationStatus, NewKind, NewModality, DefaultErrorCode} {
		assert.NotContains(t, string(doc), `"`+v+`"`, v)
	}
	for _, c := range ErrorCodes {
		assert.NotContains(t, string(doc), `"`+c+`"`, c)
	}
}
