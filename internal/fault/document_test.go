package fault

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The ordered tree writes control.json back byte for byte: only what the
// registry decides can change in it.
func TestOrderedJSONRoundTrip(t *testing.T) {
	doc, err := os.ReadFile("../../control.json")
	require.NoError(t, err)
	v, err := decodeOrdered(doc)
	require.NoError(t, err)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(v))
	assert.Equal(t, string(doc), out.String())
}

// Every registered kind says what it is and implements its stage; every
// parameter has a label, a sentence and a schema; FaultSpec, generated from
// the registry, has a field for every parameter (and the targeting) alone.
func TestKindTable(t *testing.T) {
	assert.Empty(t, Problems(), "the registry holds together")
	require.NotEmpty(t, kinds)
	vias := map[string]bool{}
	for _, k := range kinds {
		assert.NotEmpty(t, k.about.Doc, k.name)
		assert.NotEmpty(t, k.about.Meets, k.name)
		assert.True(t, implements(reflect.New(k.typ).Interface().(Kind), k.about.Stage), k.name)
		for _, tg := range k.about.Targets {
			assert.Contains(t, Targets, tg, k.name)
		}
		for _, s := range k.about.Shorthands {
			assert.False(t, vias[s.Via], "the via %s is one shorthand's", s.Via)
			vias[s.Via] = true
			assert.Equal(t, k.name, s.Kind)
		}
	}
	for _, p := range params {
		var schema map[string]any
		require.NoError(t, json.Unmarshal([]byte(p.facts()), &schema), p.Name)
		assert.NotEmpty(t, p.title, p.Name)
		assert.NotEmpty(t, p.doc, p.Name)
		names, _ := p.takers()
		assert.NotEmpty(t, names, "a kind takes %s", p.Name)
	}
	var all []string
	for _, p := range params {
		all = append(all, p.Name)
	}
	var fields []string
	st := reflect.TypeFor[Spec]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if name != "kind" && !slices.Contains(Targets, name) {
			fields = append(fields, name)
		}
	}
	assert.ElementsMatch(t, all, fields, "FaultSpec's parameters are the registry's")
	// A spec that gives every parameter (through JSON, as the control API
	// reads one) gives each, as set says.
	full := map[string]any{}
	for _, p := range params {
		// (true: a boolean that is no pointer is absent when false.)
		full[p.Name] = map[string]any{"integer": 1, "number": 0.5, "string": "x", "boolean": true, "object": map[string]any{}}[p.schemaType]
	}
	var s Spec
	b, _ := json.Marshal(full)
	require.NoError(t, json.Unmarshal(b, &s))
	var set []string
	for _, p := range params {
		if p.set(&s) {
			set = append(set, p.Name)
		}
	}
	assert.ElementsMatch(t, all, set)
}
