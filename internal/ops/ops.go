// Package ops holds the service's operations: one handler per operation of
// openapi.json, shared by every front that serves them. A front lets a
// request through the gate, validates it against openapi.json, and hands it
// here as a Call; the handler runs the engine and returns the status and the
// wire shape of the answer, which the front renders in its own protocol
// (an HTTP response for REST, a tool result for MCP).
package ops

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/mediamock/mediamock/internal/front"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Call is one operation on its way through a handler.
type Call struct {
	Env *front.Env
	// Request is the operation as an HTTP request, validated against
	// openapi.json: its context bounds the call, its body is still unread.
	Request   *http.Request
	Principal sim.Principal
	// Vars are the path parameters, Query the query parameters.
	Vars  map[string]string
	Query url.Values
	// View renders engine records with the links the caller can reach.
	View wire.View
}

// handlerFunc serves one operation: it returns a status and a body to
// encode as JSON, or an error for the error object.
type handlerFunc func(c *Call) (int, any, error)

type route struct {
	method, path, op string
	h                handlerFunc
}

// Operation is an operation of the service: its operationId in openapi.json
// and the method and path of its REST form (relative to the base path).
type Operation struct{ ID, Method, Path string }

// Operations lists the operations in the order of the specification.
func Operations() []Operation {
	out := make([]Operation, len(table))
	for i, rt := range table {
		out[i] = Operation{ID: rt.op, Method: rt.method, Path: rt.path}
	}
	return out
}

// Run serves the call with the handler of operation op.
func Run(op string, c *Call) (int, any, error) {
	for _, rt := range table {
		if rt.op == op {
			return rt.h(c)
		}
	}
	return 0, nil, &sim.Error{Kind: sim.ENOTFOUND, Code: "not_found", Message: "No operation " + op + "."}
}

func (c *Call) eng() *sim.Engine { return c.Env.Eng }

func (c *Call) query(name string) string { return c.Query.Get(name) }

// queryInt reads an integer parameter the contract has already validated.
func (c *Call) queryInt(name string, def int) int {
	v := c.Query.Get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return def
	}
	return n
}

// id is the path id, validated as a positive integer by the contract.
func (c *Call) id() uint64 {
	n, _ := strconv.ParseUint(c.Vars["id"], 10, 64)
	return n
}

// decode reads a JSON body the contract has already validated.
func (c *Call) decode(v any) error { return wire.DecodeJSON(c.Request.Body, v) }
