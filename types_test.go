package mediamock_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock"
)

// jsonFields are the JSON names of a struct's fields.
func jsonFields(v any) []string {
	var out []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// The Go types of what the control API shows have every field it shows:
// a field added to control.json and not to the Go type fails here.
func TestGoTypesHaveTheControlAPIFields(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(mediamock.ControlDocument, &doc))
	for schema, v := range map[string]any{
		"Faults":       mediamock.Faults{},
		"FailRule":     mediamock.FailRule{},
		"JournalEntry": mediamock.JournalEntry{},
		"Coverage":     mediamock.Coverage{},
	} {
		var want []string
		for name := range doc.Components.Schemas[schema].Properties {
			want = append(want, name)
		}
		require.NotEmpty(t, want, "control.json has the schema %s", schema)
		assert.ElementsMatch(t, want, jsonFields(v), "the Go type of %s", schema)
	}
}
