package wire

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/mediamock/mediamock/internal/problem"
	"github.com/mediamock/mediamock/sim"
)

// ErrorBody is the spec's error object: { error: { code, message, details } }.
type ErrorBody struct {
	Error ErrorObject `json:"error"`
}

// ErrorObject is the inside of ErrorBody.
type ErrorObject struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// ErrorOf renders an error; errors that are not *sim.Error are internal.
func ErrorOf(err error) (int, ErrorBody) {
	e := sim.AsError(err)
	return Status(e.Kind), ErrorBody{Error: ErrorObject{Code: e.Code, Message: e.Message, Details: e.Details}}
}

// statusOf maps an engine error kind to an HTTP status.
var statusOf = map[sim.Kind]int{
	sim.EINVALID:       http.StatusBadRequest,
	sim.EUNAUTHORIZED:  http.StatusUnauthorized,
	sim.EPAYMENT:       http.StatusPaymentRequired,
	sim.EFORBIDDEN:     http.StatusForbidden,
	sim.ENOTFOUND:      http.StatusNotFound,
	sim.ENOTALLOWED:    http.StatusMethodNotAllowed,
	sim.ECONFLICT:      http.StatusConflict,
	sim.ETOOLARGE:      http.StatusRequestEntityTooLarge,
	sim.EUNSUPPORTED:   http.StatusUnsupportedMediaType,
	sim.EUNPROCESSABLE: http.StatusUnprocessableEntity,
	sim.ERATELIMIT:     http.StatusTooManyRequests,
	sim.EINTERNAL:      http.StatusInternalServerError,
	sim.EUNAVAILABLE:   http.StatusServiceUnavailable,
}

// KindOf is the engine error kind of an HTTP status, false when none
// stands for it.
func KindOf(status int) (sim.Kind, bool) {
	for k, st := range statusOf {
		if st == status {
			return k, true
		}
	}
	return "", false
}

// Status is the HTTP status of an engine error kind.
func Status(k sim.Kind) int {
	if st, ok := statusOf[k]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// FileTooLarge is the error of an image over the 10 MiB limit.
func FileTooLarge() *sim.Error {
	return &sim.Error{Kind: sim.ETOOLARGE, Code: "file_too_large",
		Message: fmt.Sprintf("The image is over 10 MiB (%d bytes).", sim.MaxImageBytes), Details: map[string]any{"limit_bytes": sim.MaxImageBytes}}
}

// BodyError is the error of a body that cannot be read.
func BodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return problem.TooLarge(mbe.Limit)
	}
	return &sim.Error{Kind: sim.EINVALID, Code: "invalid_body", Message: "The body cannot be read: " + err.Error() + "."}
}

// NotFound is the error of a path no operation serves.
func NotFound(method, path string) *sim.Error {
	return &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: fmt.Sprintf("No operation at %s %s.", method, path)}
}

// MethodNotAllowed is the error of a method a path does not serve.
func MethodNotAllowed(method, where, allow string, methods []string) *sim.Error {
	return &sim.Error{Kind: sim.ENOTALLOWED, Code: "method_not_allowed",
		Message: fmt.Sprintf("%s is not allowed on %s; allowed: %s.", method, where, allow),
		Details: map[string]any{"allowed_methods": methods}}
}
