package mcp

import (
	"encoding/json"
	"strconv"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mediamock/mediamock/internal/mcpserver"
	"github.com/mediamock/mediamock/internal/problem"
)

// callArgs are a tool call's arguments taken apart, as both MCP servers
// make them an operation's input, read once where they stand in the
// message and kept no more than an error lists: the path and query
// parameters by name; the other members, for a tool whose operation takes
// a JSON body, as that body's bytes (one object, the members in the order
// sent: the arguments' own bytes when they hold nothing else), which the
// contract then judges as it judges a REST body of the same bytes; for a
// tool without one, the names of those unknown
// arguments, the first ones an error lists and the count of the others.
type callArgs struct {
	// bad says the arguments are not a JSON object (nor absent, nor null).
	bad bool
	// params are the arguments that are parameters, each value as sent.
	params map[string]json.RawMessage
	// body is the other members as one JSON object; nil when there are
	// none, or when the operation takes no body.
	body []byte
	// unknown are the other members' names when the operation takes no
	// body.
	unknown problem.FirstNames
}

// split takes a call's arguments apart for t (arguments as sent, nil when
// absent). A body member named wait whose value is a number over limit
// (when limit is positive) is given as limit instead: the wait of a
// service tool that is a body property (wait_seconds); a wait that is a
// parameter is capped in params (capSeconds). A body of the arguments as
// they are (no parameter among them, nothing capped) is their bytes, not a
// copy.
func (t *tool) split(arguments jsontext.Value, wait string, limit int) callArgs {
	var a callArgs
	switch arguments.Kind() {
	case 0, 'n':
		return a
	case '{':
	default:
		a.bad = true
		return a
	}
	capped := func(name []byte, value jsontext.Value) jsontext.Value {
		if limit > 0 && string(name) == wait && value.Kind() == '0' {
			if n, err := strconv.ParseFloat(string(value), 64); err == nil && n > float64(limit) {
				return jsontext.Value(strconv.Itoa(limit))
			}
		}
		return nil
	}
	members, whole := 0, true
	mcpserver.EachMember(arguments, func(rawName, value jsontext.Value) {
		name := mcpserver.Unquote(rawName)
		switch {
		case t.param(name):
			if a.params == nil {
				a.params = map[string]json.RawMessage{}
			}
			a.params[string(name)] = json.RawMessage(value)
			whole = false
		case !t.args.Body:
			if view := unsafe.String(unsafe.SliceData(name), len(name)); a.unknown.Wants(view) {
				a.unknown.Add(string(name))
			} else {
				a.unknown.Add(view) // counted, not kept
			}
		default:
			members++
			if capped(name, value) != nil {
				whole = false
			}
		}
	})
	switch {
	case !t.args.Body || members == 0:
	case whole:
		a.body = arguments
	default:
		body := make([]byte, 0, len(arguments))
		mcpserver.EachMember(arguments, func(rawName, value jsontext.Value) {
			name := mcpserver.Unquote(rawName)
			if t.param(name) {
				return
			}
			if len(body) == 0 {
				body = append(body, '{')
			} else {
				body = append(body, ',')
			}
			if c := capped(name, value); c != nil {
				value = c
			}
			body = append(append(append(body, rawName...), ':'), value...)
		})
		a.body = append(body, '}')
	}
	return a
}

// param reports whether name is one of t's path or query parameters.
func (t *tool) param(name []byte) bool {
	for _, p := range t.args.Path {
		if p == string(name) {
			return true
		}
	}
	for _, p := range t.args.Query {
		if p == string(name) {
			return true
		}
	}
	return false
}

// unknownArguments are the violations of the arguments a tool without a
// body does not take, in the order of their names: the first ones an
// error lists, and the count of the others.
func (t *tool) unknownArguments(a *callArgs, v *problem.Violations) {
	for _, name := range a.unknown.Sorted() {
		v.Append(problem.Violation{In: "arguments", Field: name, Reason: "unknown field", Allowed: t.names})
	}
	v.Uncounted(a.unknown.More())
}
