package contract

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decodeAny gives what json.Unmarshal gives, value and error, on every
// document: the validator judges the same value either way.
func FuzzDecodeAny(f *testing.F) {
	for _, doc := range []string{
		`{}`, `[]`, `""`, `0`, `-1.5e3`, `true`, `false`, `null`, ` { "a" : [ 1 , "x" , null , { } ] } `,
		`{"prompt":"a cat","count":2,"options":{"aspect_ratio":"16:9"}}`,
		`{"a":1,"a":2}`, `{"":""}`, `"\u00e9\n\"\\"`, `"\ud83d\ude00"`, `"\ud800"`, "\"\xff\xfe\"", `"é"`,
		`1e400`, `[1e400]`, `{"a":-0}`, `12345678901234567890123`, `{"a":"b"} x`, `{"a":`, `[1,]`, ``, ` `,
		`{"image_url":"data:image/png;base64,iVBORw0KGgo="}`, `[[[[[]]]]]`, `{"a":{"b":{"c":[true,false]}}}`,
	} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want any
		wantErr := json.Unmarshal(data, &want)
		got, err := decodeAny(append([]byte(nil), data...))
		if wantErr != nil {
			require.Error(t, err)
			assert.Equal(t, wantErr.Error(), err.Error())
			return
		}
		require.NoError(t, err)
		assert.Equal(t, want, got)
	})
}

// A string without escapes shares the document's bytes; one with escapes
// is its own copy.
func TestDecodeAnySharesPlainStrings(t *testing.T) {
	doc := []byte(`{"plain":"` + strings.Repeat("A", 1<<20) + `","escaped":"a\nb"}`)
	v, err := decodeAny(doc)
	require.NoError(t, err)
	m := v.(map[string]any)
	assert.Equal(t, strings.Repeat("A", 1<<20), m["plain"])
	assert.Equal(t, "a\nb", m["escaped"])
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _ = decodeAny(doc)
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<10), "a plain string of 1 MiB is not copied")
}
