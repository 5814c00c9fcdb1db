package wire

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
	"unsafe"
)

// DataURIString is a string field that may carry a data URI of many
// megabytes (an upload's image_url). Decoded by UnmarshalJSON or
// DecodeJSONSized from a document read whole, a data URI without escapes
// shares the document's bytes instead of being copied: a 10 MB upload is
// not held twice while its image is decoded. Any other string is copied as
// usual. The document must not change while the string is in use; a
// request body does not, and a data URI is never stored (its bytes are).
type DataURIString string

// UnmarshalJSON implements json.Unmarshaler.
func (s *DataURIString) UnmarshalJSON(b []byte) error {
	if len(b) > len(`"data:"`) && bytes.HasPrefix(b, []byte(`"data:`)) && b[len(b)-1] == '"' &&
		bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		*s = DataURIString(unsafe.String(&b[1], len(b)-2))
		return nil
	}
	var v string
	err := json.Unmarshal(b, &v)
	*s = DataURIString(v)
	return err
}
