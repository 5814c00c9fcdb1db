package contract

import (
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediamock/mediamock/internal/problem"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// A JSON body is read once, and left to the handler as a reader of those
// bytes: validating the request again, or decoding it, reads nothing more.
// A body that breaks the schema, or is no JSON, gets the same errors as
// through the validator's own path.
func TestJSONBodyIsReadOnce(t *testing.T) {
	data, err := os.ReadFile("../../openapi.json")
	require.NoError(t, err)
	c, err := Parse("openapi.json", data)
	require.NoError(t, err)

	body := `{"modality":"image","model_id":"imagen-4","prompt":"a kite"}`
	src := &countingReader{r: strings.NewReader(body)}
	r := httptest.NewRequest("POST", "/api/v1/generations", src)
	r.Header.Set("Content-Type", "application/json")
	require.NoError(t, c.ValidateRequest(r, "createGeneration", nil, nil))
	assert.Equal(t, len(body), src.n, "read once, whole")
	b, ok := r.Body.(*bytesBody)
	require.True(t, ok, "the body is left as a reader of the bytes read, not copied again: %T", r.Body)
	assert.Equal(t, body, string(b.Bytes()))
	require.NoError(t, c.ValidateRequest(r, "createGeneration", nil, nil))
	assert.Equal(t, len(body), src.n, "not read again")
	assert.Same(t, b, r.Body)

	for _, tc := range []struct{ body, code, text string }{
		{`{"modality":"image","model_id":"imagen-4","prompt":"x","count":9}`, "validation_failed", "count"},
		{`{"modality":"image","model_id":"imagen-4","prompt":"x","extra":1}`, "validation_failed", "extra"},
		{`{"modality":"image"`, "invalid_json", "unexpected EOF"},
		{`{"modality":"image"} x`, "invalid_json", "unexpected data after the JSON value"},
	} {
		r := httptest.NewRequest("POST", "/api/v1/generations", strings.NewReader(tc.body))
		r.Header.Set("Content-Type", "application/json")
		err := c.ValidateRequest(r, "createGeneration", nil, nil)
		e := problem.AsError(err)
		require.NotNil(t, err, tc.body)
		assert.Equal(t, tc.code, e.Code, tc.body)
		assert.Contains(t, err.Error(), tc.text, tc.body)
	}
}
