package contract

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tiny(t *testing.T) *Contract {
	t.Helper()
	data, err := os.ReadFile("testdata/tiny.json")
	require.NoError(t, err)
	c, err := Parse("tiny.json", data)
	require.NoError(t, err)
	return c
}

func TestArgumentsMergeParametersAndBody(t *testing.T) {
	c := tiny(t)
	cases := []struct {
		op, want    string
		path, query []string
		body        bool
	}{
		{"getThing", `{"type":"object","additionalProperties":false,"required":["id"],"properties":{
			"id":{"type":"integer","minimum":1,"description":"A thing id."},
			"wait_seconds":{"type":"integer","minimum":0,"maximum":55,"default":0}}}`, []string{"id"}, []string{"wait_seconds"}, false},
		{"createThing", `{"type":"object","additionalProperties":false,"required":["name"],
			"description":"Exactly one of url and photo_id must be provided.",
			"properties":{
			"name":{"type":"string","maxLength":20,"examples":["box"]},
			"color":{"type":"string","enum":["red","blue"]},
			"url":{"type":"string"},
			"photo_id":{"type":"integer","minimum":1}}}`, nil, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.op, func(t *testing.T) {
			args, err := c.Arguments(tc.op)
			require.NoError(t, err)
			got, err := json.Marshal(args.Schema)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
			assert.Equal(t, tc.path, args.Path)
			assert.Equal(t, tc.query, args.Query)
			assert.Equal(t, tc.body, args.Body)
			assert.Equal(t, tc.body, args.BodyRequired)
		})
	}
	_, err := c.Arguments("nope")
	assert.Error(t, err)
}

func TestJSONSchemaOfNullable(t *testing.T) {
	c := tiny(t)
	s := jsonSchema(c.doc.Components.Schemas["Thing"].Value)
	assert.Equal(t, []string{"string", "null"}, s["properties"].(map[string]any)["note"].(map[string]any)["type"])
}
