package problem

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAsErrorAndIsKind(t *testing.T) {
	conflict := &Error{Kind: ECONFLICT, Code: "asset_not_ready", Message: "Not yet."}
	tests := []struct {
		name string
		err  error
		want *Error
		kind Kind
	}{
		{"an Error is itself", conflict, conflict, ECONFLICT},
		{"a wrapped Error is found", fmt.Errorf("publish: %w", conflict), conflict, ECONFLICT},
		{"anything else is internal, with no detail of it", io.ErrUnexpectedEOF,
			&Error{Kind: EINTERNAL, Code: "internal_error", Message: "Internal server error."}, EINTERNAL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AsError(tt.err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.kind, got.Kind)
		})
	}

	assert.True(t, IsKind(fmt.Errorf("x: %w", conflict), ECONFLICT))
	assert.False(t, IsKind(conflict, ENOTFOUND))
	assert.False(t, IsKind(io.EOF, EINTERNAL), "only an *Error has a kind")
	assert.False(t, IsKind(nil, EINTERNAL))
	assert.Equal(t, "asset_not_ready: Not yet.", conflict.Error())
}

func TestInvalidError(t *testing.T) {
	tests := []struct {
		name    string
		v       []Violation
		message string
	}{
		{"one problem", []Violation{{In: "body", Field: "count", Reason: "must be at most 4"}},
			"1 problem with the request: body count: must be at most 4"},
		{"problems, one without a field", []Violation{
			{In: "body", Field: "prompt", Reason: "is required"},
			{In: "header", Reason: "Content-Type must be application/json"},
		}, "2 problems with the request: body prompt: is required; header: Content-Type must be application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := InvalidError(tt.v)
			assert.Equal(t, EINVALID, e.Kind)
			assert.Equal(t, "validation_failed", e.Code)
			assert.Equal(t, tt.message, e.Message)
			assert.Equal(t, tt.v, e.Details["violations"])
		})
	}
}

func TestViolations(t *testing.T) {
	var v Violations
	require.NoError(t, v.Err(), "no violation, no error")
	v.Add("count", "must be at most %d", 4)
	v.AddAllowed("modality", []any{"image", "video"}, "%q is not a modality", "smell")
	assert.Equal(t, []Violation{
		{In: "body", Field: "count", Reason: "must be at most 4"},
		{In: "body", Field: "modality", Reason: `"smell" is not a modality`, Allowed: []any{"image", "video"}},
	}, v.List())
	err := v.Err()
	require.Error(t, err)
	assert.True(t, IsKind(err, EINVALID))
	assert.Contains(t, err.Error(), "2 problems")

	// The wire shape: allowed only when there are allowed values.
	data, err := json.Marshal(v.List())
	require.NoError(t, err)
	assert.JSONEq(t, `[{"in":"body","field":"count","reason":"must be at most 4"},
		{"in":"body","field":"modality","reason":"\"smell\" is not a modality","allowed":["image","video"]}]`, string(data))
}

func TestMerge(t *testing.T) {
	found := []Violation{{In: "body", Field: "a", Reason: "is required"}}
	extra := []Violation{{In: "body", Field: "zz", Reason: "is not an argument"}}
	ownAnswer := &Error{Kind: EINVALID, Code: "invalid_json", Message: "The body is not valid JSON."}
	tests := []struct {
		name  string
		err   error
		extra []Violation
		want  []Violation // the merged violations; nil when want is the error itself
		same  error
	}{
		{"nothing extra: the verdict as it is", InvalidError(found), nil, found, nil},
		{"nothing extra, no error", nil, nil, nil, nil},
		{"extra alone", nil, extra, extra, nil},
		{"extra after the validator's", InvalidError(found), extra, append(append([]Violation{}, found...), extra...), nil},
		{"an error that answers on its own wins", ownAnswer, extra, nil, ownAnswer},
		{"a wrapped validation error is merged", fmt.Errorf("check: %w", InvalidError(found)), extra,
			append(append([]Violation{}, found...), extra...), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Merge(tt.err, violations(tt.extra...))
			switch {
			case tt.same != nil:
				assert.Same(t, tt.same, got)
			case tt.want == nil:
				assert.NoError(t, got)
			default:
				require.Error(t, got)
				assert.Equal(t, tt.want, AsError(got).Details["violations"])
			}
		})
	}
	// Merging never writes into the validator's own list, even where it
	// has room.
	own := append(make([]Violation, 0, 4), found...)
	_ = Merge(InvalidError(own), violations(extra...))
	assert.Equal(t, Violation{}, own[:2][1])
}

// violations collects v.
func violations(v ...Violation) Violations {
	var out Violations
	out.Append(v...)
	return out
}

func TestTooLarge(t *testing.T) {
	e := TooLarge(1 << 20)
	assert.Equal(t, ETOOLARGE, e.Kind)
	assert.Equal(t, "payload_too_large", e.Code)
	assert.Equal(t, "The request body is over 1048576 bytes.", e.Message)
	assert.Equal(t, int64(1<<20), e.Details["limit_bytes"])
	var target *Error
	assert.True(t, errors.As(error(e), &target))
}
