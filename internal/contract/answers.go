package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mediamock/mediamock/internal/problem"
)

// The answers an operation may give, as the document declares them: what
// a forced answer (a status rule, the Mock-Fault header, Prism's Prefer
// header) is held to. Each declared response names the error codes it
// allows in x-error-codes, the first being the one a forced answer
// carries unless it names another; a success response may name examples.

// Success is the success status an operation declares: the lowest 2xx; 0
// when it declares none.
func (c *Contract) Success(opID string) int {
	for _, st := range c.DeclaredStatuses(opID) {
		if st >= 200 && st < 300 {
			return st
		}
	}
	return 0
}

// DeclaredStatuses lists the statuses an operation declares, in order.
func (c *Contract) DeclaredStatuses(opID string) []int {
	out := c.Statuses(opID)
	slices.Sort(out)
	return out
}

// ErrorStatuses are the error statuses every operation with a scope
// declares: those a forced answer may take whatever operation it strikes.
func (c *Contract) ErrorStatuses() []int {
	var out []int
	first := true
	for _, o := range c.ops {
		if o.Scope == "" {
			continue
		}
		var errs []int
		for _, st := range c.DeclaredStatuses(o.ID) {
			if st >= 400 {
				errs = append(errs, st)
			}
		}
		if first {
			out, first = errs, false
			continue
		}
		out = slices.DeleteFunc(out, func(st int) bool { return !slices.Contains(errs, st) })
	}
	return out
}

// response is the response an operation declares for a status, nil when
// it declares none.
func (c *Contract) response(opID string, status int) *openapi3.Response {
	r := c.routes[opID]
	if r == nil || r.Operation.Responses == nil {
		return nil
	}
	ref := r.Operation.Responses.Value(strconv.Itoa(status))
	if ref == nil {
		return nil
	}
	return ref.Value
}

// ErrorCodes lists the error codes the document allows in an operation's
// answer of status (its response's x-error-codes), the one a forced
// answer carries first. With opID "", those of any operation that
// declares the status. Nil when none declares it, or it names none.
func (c *Contract) ErrorCodes(opID string, status int) []string {
	if opID == "" {
		var out []string
		for _, o := range c.ops {
			for _, code := range c.ErrorCodes(o.ID, status) {
				if !slices.Contains(out, code) {
					out = append(out, code)
				}
			}
		}
		return out
	}
	resp := c.response(opID, status)
	if resp == nil {
		return nil
	}
	list, _ := resp.Extensions["x-error-codes"].([]any)
	out := make([]string, 0, len(list))
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Examples lists the names of the examples the document gives for an
// operation's JSON answer of status, in order.
func (c *Contract) Examples(opID string, status int) []string {
	mt := c.jsonContent(opID, status)
	if mt == nil {
		return nil
	}
	names := make([]string, 0, len(mt.Examples))
	for name := range mt.Examples {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Example is the JSON of a named example of an operation's answer of
// status; false when the document has none of that name.
func (c *Contract) Example(opID string, status int, name string) ([]byte, bool) {
	mt := c.jsonContent(opID, status)
	if mt == nil {
		return nil, false
	}
	ex := mt.Examples[name]
	if ex == nil || ex.Value == nil {
		return nil, false
	}
	b, err := json.Marshal(ex.Value.Value)
	return b, err == nil
}

func (c *Contract) jsonContent(opID string, status int) *openapi3.MediaType {
	resp := c.response(opID, status)
	if resp == nil {
		return nil
	}
	return resp.Content.Get("application/json")
}

// CheckAnswer judges a JSON body as an operation's answer of status: the
// violations of its response's schema, each named by its path below
// "body" (body.error.code). An operation that does not declare the status,
// or declares no JSON for it, refuses every body.
func (c *Contract) CheckAnswer(opID string, status int, body []byte) []problem.Violation {
	bad := func(field, reason string) []problem.Violation {
		return []problem.Violation{{In: "body", Field: field, Reason: reason}}
	}
	mt := c.jsonContent(opID, status)
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return bad("body", fmt.Sprintf("%s declares no JSON answer of status %d", opID, status))
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&v); err != nil || dec.More() {
		return bad("body", "is not one JSON value")
	}
	err := mt.Schema.Value.VisitJSON(v, openapi3.MultiErrors())
	if err == nil {
		return nil
	}
	var out []problem.Violation
	var walk func(err error)
	walk = func(err error) {
		var me openapi3.MultiError
		if errors.As(err, &me) {
			for _, e := range me {
				walk(e)
			}
			return
		}
		var se *openapi3.SchemaError
		if !errors.As(err, &se) {
			out = append(out, problem.Violation{In: "body", Field: "body", Reason: err.Error()})
			return
		}
		field := "body"
		for _, p := range se.JSONPointer() {
			if _, err := strconv.Atoi(p); err == nil {
				field += "[" + p + "]"
			} else {
				field += "." + p
			}
		}
		v := problem.Violation{In: "body", Field: field, Reason: se.Reason}
		switch se.SchemaField {
		case "required":
			v.Reason = "is required"
		case "enum":
			v.Reason, v.Allowed = "must be one of the allowed values", se.Schema.Enum
		}
		if strings.HasPrefix(se.Reason, "property \"") && strings.HasSuffix(se.Reason, "\" is unsupported") {
			v.Field += "." + strings.TrimSuffix(strings.TrimPrefix(se.Reason, "property \""), "\" is unsupported")
			v.Reason = "unknown field"
		}
		out = append(out, v)
	}
	walk(err)
	return out
}
