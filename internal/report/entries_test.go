package report

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mediamock/mediamock/controlapi"
)

// The id a creation answered with is read without decoding a generation
// as the API writes it, and decoded otherwise (members reordered by an
// --evolve server, an MCP result, an Encore creation): the same id.
func TestCreatedReadsTheFirstAssetsID(t *testing.T) {
	rest := &controlapi.JournalEntry{Front: "rest"}
	for body, want := range map[string]uint64{
		`{"object":"generation","status":"queued","assets":[{"id":157828,"object":"asset"},{"id":157829}],"credits_charged":6}`: 157828,
		`{"status":"queued","object":"generation","assets":[{"object":"asset","id":42}]}`:                                       42,
		`{"object":"generation","status":"queued","assets":[{"id":"x"}]}`:                                                       0,
		`{"object":"encore_creation","id":7,"status":"queued"}`:                                                                 7,
		`{"object":"generation","status":"queued","assets":[{"id":9}]}`:                                                         9,
	} {
		assert.Equal(t, want, created(rest, []byte(body)), body)
	}
	mcp := &controlapi.JournalEntry{Front: "mcp"}
	assert.Equal(t, uint64(5), created(mcp, []byte(`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"object":"generation","status":"queued","assets":[{"id":5}]}}}`)))
}
