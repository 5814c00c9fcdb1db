package jsonvalue

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Decode gives what json.Unmarshal gives, value and error, on every
// document: the validator judges the same value either way.
func FuzzDecode(f *testing.F) {
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
		got, err := Decode(append([]byte(nil), data...))
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
func TestDecodeSharesPlainStrings(t *testing.T) {
	doc := []byte(`{"plain":"` + strings.Repeat("A", 1<<20) + `","escaped":"a\nb"}`)
	v, err := Decode(doc)
	require.NoError(t, err)
	m := v.(map[string]any)
	assert.Equal(t, strings.Repeat("A", 1<<20), m["plain"])
	assert.Equal(t, "a\nb", m["escaped"])
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _ = Decode(doc)
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<10), "a plain string of 1 MiB is not copied")
}

// BenchmarkDecode is what Decode saves over encoding/json, its
// fallback, on a creation's body and on an upload of a 10 MB data URI: a
// string without escapes shares the document's bytes instead of being
// copied.
//
//	go test -run '^$' -bench Decode -benchmem ./internal/contract/jsonvalue/
func BenchmarkDecode(b *testing.B) {
	for _, tc := range []struct{ name, doc string }{
		{"generation", `{"modality":"image","model_id":"imagen-4","prompt":"a benchmark of lighthouses at dusk","aspect_ratio":"16:9","count":2}`},
		{"upload 10 MB", `{"image_url":"data:image/png;base64,` + strings.Repeat("A", 10<<20) + `","title":"big"}`},
	} {
		doc := []byte(tc.doc)
		b.Run(tc.name+"/jsonvalue", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, err := Decode(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				var v any
				if err := json.Unmarshal(doc, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A Reader reads part of a document: what it skips costs nothing kept,
// but a number float64 cannot hold there is the document's error still,
// the first one, as json.Unmarshal reports it.
func TestReaderSkips(t *testing.T) {
	doc := []byte(`{"keep":{"a":[1,"x"]},"skip":{"deep":[{"n":-2e999}],"s":"a\"}b"},"last":1e400}`)
	r, err := NewReader(doc)
	require.NoError(t, err)
	kept := map[string]any{}
	r.Object(func(name string) {
		if name == "skip" {
			r.Skip()
			return
		}
		kept[name] = r.Value()
	})
	assert.Equal(t, map[string]any{"keep": map[string]any{"a": []any{1.0, "x"}}, "last": nil}, kept)
	var want any
	wantErr := json.Unmarshal(doc, &want)
	require.Error(t, r.Err())
	assert.Equal(t, wantErr.Error(), r.Err().Error(), "the skipped member's number, the first")

	_, err = NewReader([]byte(`{"a":}`))
	assert.Equal(t, json.Unmarshal([]byte(`{"a":}`), &want).Error(), err.Error())
}
