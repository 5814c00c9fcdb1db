package contract

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An operation's facts are read from the document: its REST form in the
// document's order, its scope, and the x- extensions.
func TestOperationsComeFromTheDocument(t *testing.T) {
	c := tiny(t)
	ops := c.Operations()
	require.Len(t, ops, 2)
	assert.Equal(t, Operation{ID: "getThing", Method: "GET", Path: "/things/{id}", Scope: "read", ReadOnly: true}, ops[0], "first in the document, first in the list")
	assert.Equal(t, Operation{ID: "createThing", Method: "POST", Path: "/things", Scope: "write"}, ops[1])

	data, err := os.ReadFile("testdata/tiny.json")
	require.NoError(t, err)
	doc := strings.Replace(string(data), `"x-required-scope": "write",`, `"x-required-scope": "write", "x-mcp-tool": "create_thing", "x-mcp-description": "Makes a thing.",
		"x-spends-credits": true, "x-destructive": true, "x-open-world": true, "x-list-order": "newest_first",`, 1)
	c, err = Parse("tiny.json", []byte(doc))
	require.NoError(t, err)
	op, ok := c.Operation("createThing")
	require.True(t, ok)
	assert.Equal(t, Operation{ID: "createThing", Method: "POST", Path: "/things", Scope: "write", Tool: "create_thing", ToolDescription: "Makes a thing.",
		SpendsCredits: true, Destructive: true, OpenWorld: true, NewestFirst: true}, op)

	for _, bad := range []struct{ ext, why string }{
		{`"x-spends-credits": "yes",`, "x-spends-credits must be a boolean"},
		{`"x-mcp-tool": 7,`, "x-mcp-tool must be a string"},
		{`"x-list-order": "oldest_first",`, "the one order known is newest_first"},
	} {
		doc := strings.Replace(string(data), `"x-required-scope": "write",`, `"x-required-scope": "write", `+bad.ext, 1)
		_, err := Parse("tiny.json", []byte(doc))
		assert.ErrorContains(t, err, bad.why)
	}
	doc = strings.Replace(string(data), `"x-required-scope": "write",`, `"x-mcp-tool": "create_thing",`, 1)
	_, err = Parse("tiny.json", []byte(doc))
	assert.ErrorContains(t, err, "a tool needs x-required-scope")
}

// The service's operations: every one that needs a scope is a tool, in the
// order of the specification; the facts the fronts rely on are declared.
func TestServiceOperations(t *testing.T) {
	data, err := os.ReadFile("../../spec/openapi.json")
	require.NoError(t, err)
	c, err := ParseEmbedded("openapi.json", data)
	require.NoError(t, err)
	var ids []string
	for _, op := range c.Operations() {
		ids = append(ids, op.ID)
		if op.Scope != "" {
			assert.NotEmpty(t, op.Tool, "%s is a tool", op.ID)
		}
	}
	assert.Equal(t, "getAccount", ids[0], "the specification's order")
	assert.Equal(t, "getOpenAPIDocument", ids[len(ids)-1])
	facts := func(id string) Operation { op, _ := c.Operation(id); return op }
	assert.True(t, facts("createGeneration").SpendsCredits)
	assert.True(t, facts("createEncoreCreation").SpendsCredits)
	assert.False(t, facts("createUpload").SpendsCredits, "uploads are free")
	assert.True(t, facts("createPublication").Destructive, "a post cannot be taken back")
	assert.True(t, facts("listAssets").NewestFirst)
	assert.False(t, facts("listModels").NewestFirst)
}

func TestDocumentOrder(t *testing.T) {
	doc := []byte(`{"a": {"operationId": "one", "description": "mentions \"operationId\": \"nope\""}, "b": {"operationId" : "two"}, "c": {"operationId":"one"}}`)
	assert.Equal(t, map[string]int{"one": 1, "two": 2}, documentOrder(doc))
}
