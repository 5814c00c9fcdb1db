package check

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeDecisions are the ids of the decisions of
// docs/reference/decisions.md, in order.
func readmeDecisions(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../docs/reference/decisions.md")
	require.NoError(t, err)
	page := string(data)
	start := strings.Index(page, "# Decisions where the specification is silent")
	require.GreaterOrEqual(t, start, 0)
	section := page[start+2:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var ids []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "- ") {
			m := regexp.MustCompile(`^- \*\*(D-\d+) `).FindStringSubmatch(line)
			require.NotNil(t, m, "a decision without its id in bold: %q", line)
			ids = append(ids, m[1])
		}
	}
	return ids
}

// TestDecisionIDs: the decisions (docs/reference/decisions.md) are D-1, D-2, ... in order, each
// once; every id openapi.json (x-mock-decision, x-mock-decision-closed)
// and the checker's rules use is one of them; and whatever the document
// marks *Mock decision* in a description carries its id (or some of its
// properties do).
func TestDecisionIDs(t *testing.T) {
	ids := readmeDecisions(t)
	require.NotEmpty(t, ids)
	known := map[string]bool{}
	for i, id := range ids {
		assert.Equal(t, "D-"+strconv.Itoa(i+1), id, "decision %d", i+1)
		assert.False(t, known[id], "%s twice", id)
		known[id] = true
	}

	data, err := os.ReadFile("../../spec/openapi.json")
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	resolve := func(v any) map[string]any {
		m, _ := v.(map[string]any)
		if ref, ok := m["$ref"].(string); ok {
			var cur any = doc
			for _, seg := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
				cur = cur.(map[string]any)[seg]
			}
			m, _ = cur.(map[string]any)
		}
		return m
	}
	t2 := t
	used := 0
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch t := v.(type) {
		case map[string]any:
			marks := 0
			for _, key := range []string{"x-mock-decision", "x-mock-decision-closed"} {
				if id, ok := t[key]; ok {
					marks++
					used++
					assert.True(t2, tb(id, known), "%s: %s %v is not a decision of docs/reference/decisions.md", path, key, id)
				}
			}
			props, _ := t["properties"].(map[string]any)
			for _, p := range props { // the decision may be about some of its fields
				if _, ok := p.(map[string]any)["x-mock-decision"]; ok {
					marks++
				}
			}
			if d, _ := t["description"].(string); strings.Contains(d, "*Mock decision*") && path != "/info" && marks == 0 {
				// An operation's decision is on its 201 body's schema.
				created := resolve(resolve(resolve(t["responses"])["201"]))
				schema := resolve(resolve(resolve(resolve(created["content"])["application/json"])["schema"]))
				_, ok := schema["x-mock-decision"]
				assert.True(t2, ok, "%s says *Mock decision* but carries no x-mock-decision", path)
			}
			for k, c := range t {
				walk(c, path+"/"+k)
			}
		case []any:
			for i, c := range t {
				walk(c, path+"/"+strconv.Itoa(i))
			}
		}
	}
	walk(doc, "")
	assert.Greater(t, used, 20)

	for _, r := range Rules {
		if r.Source.Label == LabelMockDecision {
			assert.True(t, known[r.Source.Decision], "rule %s: %s", r.ID, r.Source.Decision)
		} else {
			assert.Equal(t, LabelSpec, r.Source.Label, r.ID)
			assert.NotEmpty(t, r.Source.Section, r.ID)
		}
	}
	for op, id := range listOrderDecision {
		assert.True(t, known[id], "%s: %s", op, id)
	}
}

func tb(id any, known map[string]bool) bool {
	s, ok := id.(string)
	return ok && known[s]
}
