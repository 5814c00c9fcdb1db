package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/sim"
)

// DecodeJSON reads exactly one JSON value into v. Integral numbers written
// as 1.0 or 1e2 are integers for the contract (JSON Schema), so they are for
// the decoder too.
func DecodeJSON(body io.Reader, v any) error {
	data, err := io.ReadAll(body)
	if err != nil {
		return BodyError(err)
	}
	return UnmarshalJSON(data, v)
}

// UnmarshalJSON decodes exactly one JSON value of data into v, like DecodeJSON.
func UnmarshalJSON(data []byte, v any) error {
	invalid := func(reason string) error {
		return &sim.Error{Kind: sim.EINVALID, Code: "invalid_json", Message: "The body is not valid JSON: " + reason + "."}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") {
		if data, err = integralNumbers(data); err == nil {
			dec = json.NewDecoder(bytes.NewReader(data))
			err = dec.Decode(v)
		}
	}
	if err != nil {
		return invalid(err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("unexpected data after the JSON value")
	}
	return nil
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
