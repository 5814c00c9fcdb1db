package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mediamock/mediamock/sim"
)

// DecodeJSON reads exactly one JSON value into v. Integral numbers written
// as 1.0 or 1e2 are integers for the contract (JSON Schema), so they are for
// the decoder too.
func DecodeJSON(body io.Reader, v any) error {
	return DecodeJSONSized(body, -1, v)
}

// DecodeJSONSized is DecodeJSON for a body of a declared size (-1 when
// unknown): it is read into one buffer of that size, not a growing one
// that leaves copies of a large body behind.
func DecodeJSONSized(body io.Reader, size int64, v any) error {
	if b, ok := body.(interface{ Bytes() []byte }); ok {
		return UnmarshalJSON(b.Bytes(), v) // read whole already (contract.Body)
	}
	var buf bytes.Buffer
	if size > 0 {
		buf.Grow(int(min(size, 64<<20)) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(body); err != nil {
		return BodyError(err)
	}
	return UnmarshalJSON(buf.Bytes(), v)
}

// decodes counts the documents UnmarshalJSON decoded (Decodes).
var decodes atomic.Uint64

// Decodes is how many JSON documents DecodeJSON, DecodeJSONSized and
// UnmarshalJSON have decoded in the process: a test holds the operations'
// pipeline to decoding none (their bodies are decoded once, by the
// contract, and bound).
func Decodes() uint64 { return decodes.Load() }

// UnmarshalJSON decodes exactly one JSON value of data into v, like DecodeJSON.
func UnmarshalJSON(data []byte, v any) error {
	decodes.Add(1)
	invalid := func(reason string) error {
		return &sim.Error{Kind: sim.EINVALID, Code: "invalid_json", Message: "The body is not valid JSON: " + reason + "."}
	}
	// Unmarshal reads data where it is (a Decoder would copy it into a
	// buffer of its own, growing).
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") {
		if data, err = integralNumbers(data); err == nil {
			err = json.Unmarshal(data, v)
		}
	}
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value"):
		return invalid("unexpected data after the JSON value")
	case errors.As(err, &se) && strings.HasPrefix(se.Error(), "unexpected end of JSON input"):
		return invalid("unexpected EOF")
	}
	return invalid(err.Error())
}

// integralNumbers rewrites numbers such as 1.0 and 1e2 as 1 and 100.
func integralNumbers(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		case json.Number:
			if f, err := t.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return json.Number(strconv.FormatInt(int64(f), 10))
			}
		}
		return x
	}
	return json.Marshal(walk(v))
}
