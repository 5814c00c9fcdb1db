// Package ops holds the service's operations and the one pipeline every
// front calls them through. A front turns its protocol into an Invocation
// (the call as the operation's HTTP request, the caller's credential) and
// Invoke runs every step once: the gate (authentication, rate window,
// scope, forced responses), validation against openapi.json, injected
// latency, the operation's handler, the JSON body, the strict response
// check and the coverage. The front keeps only its framing: REST writes the
// Result as an HTTP response, MCP wraps it in a tool result.
//
//	res := ops.Invoke(env, &ops.Invocation{Front: "rest", Op: "getAccount",
//		Authorization: r.Header.Get("Authorization"), Request: r, Header: w.Header(), View: env.View(r)})
//	defer res.Release()
//	w.WriteHeader(res.Status)
//	w.Write(res.Body())
package ops

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/edge"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Call is one operation on its way through a handler.
type Call struct {
	Env *edge.Env
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

// Check holds the handlers against a contract: every operation that needs
// a scope has a handler, and every handler an operation. A server checks
// it once, at start.
func Check(api *contract.Contract) error {
	seen := map[string]bool{}
	for _, op := range api.Operations() {
		if op.Scope == "" {
			continue
		}
		if handlers[op.ID] == nil {
			return fmt.Errorf("operation %s of openapi.json has no handler in internal/ops", op.ID)
		}
		seen[op.ID] = true
	}
	for id := range handlers {
		if !seen[id] {
			return fmt.Errorf("handler %s serves no operation of openapi.json (an operation needs x-required-scope)", id)
		}
	}
	return nil
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
func (c *Call) decode(v any) error {
	return wire.DecodeJSONSized(c.Request.Body, c.Request.ContentLength, v)
}
