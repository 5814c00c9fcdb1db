package fault

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The ordered tree writes control.json back byte for byte: only what the
// kind table decides can change in it.
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

// Every kind's row is whole: a stage, parameters that exist, targets that
// exist, a sentence; every parameter is some kind's.
func TestKindTable(t *testing.T) {
	names := map[string]bool{}
	for _, p := range params {
		names[p.Name] = true
		var schema map[string]any
		require.NoError(t, json.Unmarshal([]byte(p.Schema), &schema), p.Name)
		assert.NotEmpty(t, p.Title, p.Name)
		assert.NotEmpty(t, p.Doc, p.Name)
	}
	used := map[string]bool{}
	for _, k := range kinds {
		assert.NotEmpty(t, k.Doc, k.Name)
		assert.Contains(t, stageNames, k.Stage, k.Name)
		for _, p := range k.Params {
			assert.True(t, names[p], "%s takes %s, which is no parameter", k.Name, p)
			used[p] = true
		}
		for _, tg := range k.Targets {
			assert.Contains(t, Targets, tg, k.Name)
		}
		assert.Equal(t, k.Stage, Point(k.Name))
	}
	for _, p := range params {
		assert.True(t, used[p.Name], "no kind takes %s", p.Name)
	}
	// Every parameter of Spec is in the table, and only those: a spec
	// that sets one names it.
	var all []string
	for _, p := range params {
		all = append(all, p.Name)
	}
	var s Spec
	b, _ := json.Marshal(fullSpec())
	require.NoError(t, json.Unmarshal(b, &s))
	assert.ElementsMatch(t, all, paramsSet(&s))
}

// fullSpec sets every parameter.
func fullSpec() map[string]any {
	return map[string]any{"after_bytes": 1, "after_fraction": 0.1, "bytes_per_second": 1, "bytes": 1, "distribution": "fixed",
		"ms": 1, "min_ms": 1, "max_ms": 1, "median_ms": 1, "sigma": 1, "status": 500, "ttl_seconds": 1, "expired_status": 404,
		"retry_after_seconds": 1, "fields": true, "enums": true, "headers": true, "reorder": true, "model": "m", "stage": "queued",
		"code": "c", "rate": 0.5, "platform": "x", "at": "processing", "outputs": 2, "social_account_id": 1}
}
