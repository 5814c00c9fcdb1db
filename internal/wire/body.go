package wire

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Body is a response body encoded as JSON the way every front writes it:
// HTML characters not escaped, a final newline. Its buffer may come from a
// pool: Release gives it back once the body has been written, and nothing
// may hold the bytes after.
type Body struct {
	data []byte
	buf  *bytes.Buffer // from bodies, when encoded here
	page bool          // a list page's buffer (RawJSON)
}

var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// PageBody is a list page's buffer as a body, taken as it is.
func PageBody(raw RawJSON) Body { return Body{data: raw, page: true} }

// HeldBody is a body held elsewhere (a fault rule's), sent as it is and
// never given back.
func HeldBody(data []byte) Body { return Body{data: data} }

// internalError is the body of a value that cannot be encoded.
var internalError = []byte(`{"error":{"code":"internal_error","message":"Internal server error."}}` + "\n")

// Marshal encodes v as a response body; a RawJSON is taken as it is. A
// value that cannot be encoded gives the internal error's body and ok false.
func Marshal(v any) (b Body, ok bool) {
	if raw, isRaw := v.(RawJSON); isRaw {
		return PageBody(raw), true
	}
	buf := bodies.Get().(*bytes.Buffer)
	buf.Reset()
	if err := encodeTo(buf, v); err != nil {
		bodies.Put(buf)
		return Body{data: internalError}, false
	}
	return Body{data: buf.Bytes(), buf: buf}, true
}

// Bytes is the encoded body, with its final newline.
func (b Body) Bytes() []byte { return b.data }

// Release gives the body's buffer back for reuse.
func (b Body) Release() {
	switch {
	case b.buf != nil:
		bodies.Put(b.buf)
	case b.page:
		ReleasePage(RawJSON(b.data))
	}
}

// Encode renders v as JSON the way a response body holds it, without the
// final newline, in a buffer of its own (renderings that are kept).
func Encode(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeTo(&b, v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func encodeTo(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
