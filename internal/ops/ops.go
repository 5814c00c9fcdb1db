// Package ops holds the service's operations and the one pipeline every
// front calls them through. A front turns its protocol into an Invocation
// (the operation, the caller's credential, the parameters as it received
// them, the body decoded once) and Invoke runs every step once: the gate
// (authentication, rate window, scope, forced responses), validation of
// the decoded input against openapi.json, injected latency, the
// operation's handler with its typed input, the JSON body, the strict
// response check and the coverage. The front keeps only its framing: REST
// writes the Result as an HTTP response, MCP wraps it in a tool result.
// The pipeline knows no transport: it imports no front.
//
//	res := ops.Invoke(env, &ops.Invocation{Ctx: r.Context(), Front: "rest", Op: "getAccount",
//		Authorization: r.Header.Get("Authorization"), Header: w.Header(), View: view})
//	defer res.Release()
//	w.WriteHeader(res.Status)
//	w.Write(res.Body())
package ops

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Call is one operation on its way through a handler. Its input (the
// parameters and the body, validated) reaches the handler bound into the
// handler's input type.
type Call struct {
	Env *Env
	// Ctx bounds the call: the client going, the server stopping. It
	// carries what a wait reports to (sim.WithProgress) and where it may
	// park (sim.WithPark).
	Ctx       context.Context
	Principal sim.Principal
	// View renders engine records with the links the caller can reach.
	View wire.View

	input contract.Input
}

// handlerFunc serves one operation: it returns a status and a body to
// encode as JSON, or an error for the error object.
type handlerFunc func(c *Call) (int, any, error)

// typed registers a handler of typed input: the call's validated input is
// bound into an In (path and query parameters into the fields tagged path
// and query, the JSON body's properties into those tagged json, a
// multipart form into a *contract.Form field), which h receives. The
// binding of In is planned once, here: an input type the binder cannot
// fill is a panic at start.
func typed[In any](h func(c *Call, in In) (int, any, error)) handlerFunc {
	b := binderOf[In]()
	return func(c *Call) (int, any, error) {
		if b.params != nil && b.body == nil && b.form == nil {
			// Parameters alone are bound in place: the input stays on
			// the stack.
			var in In
			b.bindParams(unsafe.Pointer(&in), &c.input)
			return h(c, in)
		}
		in := new(In)
		if err := b.bind(in, &c.input); err != nil {
			return 0, nil, err
		}
		return h(c, *in)
	}
}

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
