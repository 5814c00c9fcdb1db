package contract

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Operation is one operation of the document with what every front needs
// to know of it, read from the document: its REST form, its scope, and the
// x- extensions that describe it beyond OpenAPI.
//
//	x-required-scope   the scope a credential needs (read, generate, publish)
//	x-mcp-tool         the operation's name as an MCP tool (get_account)
//	x-mcp-description  the tool's description, where the REST one speaks of HTTP
//	x-spends-credits   the operation debits the workspace's credits
//	x-destructive      its effect cannot be taken back (default: true for DELETE)
//	x-open-world       it reaches beyond the service (social networks)
//	x-list-order       newest_first: a list ordered by id, newest first
type Operation struct {
	ID     string
	Method string // GET, POST
	Path   string // as the document writes it, relative to the base path: /generations/{id}
	// Scope is the scope the operation requires; "" for what needs no
	// credential (the document itself).
	Scope string
	// Tool names the operation as an MCP tool; "" when it is not one.
	Tool, ToolDescription string
	// ReadOnly: the operation changes nothing (GET).
	ReadOnly bool
	// SpendsCredits: the operation debits credits.
	SpendsCredits bool
	// Destructive: what the operation does cannot be taken back.
	Destructive bool
	// OpenWorld: the operation reaches beyond the service.
	OpenWorld bool
	// NewestFirst: a list ordered by id, newest first.
	NewestFirst bool
}

// Operations lists the operations in the order the document writes them
// (the order of the specification). The list is made once per contract;
// callers must not change it.
func (c *Contract) Operations() []Operation { return c.ops }

// Operation finds an operation by its operationId.
func (c *Contract) Operation(id string) (Operation, bool) {
	i := slices.IndexFunc(c.ops, func(o Operation) bool { return o.ID == id })
	if i < 0 {
		return Operation{}, false
	}
	return c.ops[i], true
}

// operations reads every operation's facts, in document order.
func (c *Contract) operations(data []byte) ([]Operation, error) {
	order := documentOrder(data)
	var out []Operation
	for id, r := range c.routes {
		x := r.Operation.Extensions
		str := func(name string) (string, error) {
			v, ok := x[name]
			if !ok {
				return "", nil
			}
			s, ok := v.(string)
			if !ok {
				return "", fmt.Errorf("operation %s: %s must be a string", id, name)
			}
			return s, nil
		}
		flag := func(name string, def bool) (bool, error) {
			v, ok := x[name]
			if !ok {
				return def, nil
			}
			b, ok := v.(bool)
			if !ok {
				return false, fmt.Errorf("operation %s: %s must be a boolean", id, name)
			}
			return b, nil
		}
		o := Operation{ID: id, Method: strings.ToUpper(r.Method), Path: r.Path}
		o.ReadOnly = o.Method == http.MethodGet || o.Method == http.MethodHead
		var err error
		var list string
		for _, f := range []func() error{
			func() (err error) { o.Scope, err = str("x-required-scope"); return },
			func() (err error) { o.Tool, err = str("x-mcp-tool"); return },
			func() (err error) { o.ToolDescription, err = str("x-mcp-description"); return },
			func() (err error) { list, err = str("x-list-order"); return },
			func() (err error) { o.SpendsCredits, err = flag("x-spends-credits", false); return },
			func() (err error) { o.Destructive, err = flag("x-destructive", o.Method == http.MethodDelete); return },
			func() (err error) { o.OpenWorld, err = flag("x-open-world", false); return },
		} {
			if err = f(); err != nil {
				return nil, err
			}
		}
		switch list {
		case "":
		case "newest_first":
			o.NewestFirst = true
		default:
			return nil, fmt.Errorf("operation %s: x-list-order %q: the one order known is newest_first", id, list)
		}
		if o.Tool != "" && o.Scope == "" {
			return nil, fmt.Errorf("operation %s: a tool needs x-required-scope", id)
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b Operation) int {
		if d := order[a.ID] - order[b.ID]; d != 0 {
			return d
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// documentOrder numbers the operationIds in the order the document's bytes
// hold them: a decoded document keeps its paths in a map.
func documentOrder(data []byte) map[string]int {
	order := map[string]int{}
	key := []byte(`"operationId"`)
	for rest := data; ; {
		i := bytes.Index(rest, key)
		if i < 0 {
			return order
		}
		rest = bytes.TrimLeft(rest[i+len(key):], " \t\r\n")
		if len(rest) == 0 || rest[0] != ':' {
			continue // the word inside a text, not a key
		}
		rest = bytes.TrimLeft(rest[1:], " \t\r\n")
		if len(rest) == 0 || rest[0] != '"' {
			continue
		}
		if end := bytes.IndexByte(rest[1:], '"'); end >= 0 {
			if id := string(rest[1 : 1+end]); order[id] == 0 {
				order[id] = len(order) + 1
			}
		}
	}
}

// Extension is an operation's x- extension as the document writes it (a
// string, a number, a boolean, an object), and whether it has it.
func (c *Contract) Extension(opID, name string) (any, bool) {
	r := c.routes[opID]
	if r == nil {
		return nil, false
	}
	v, ok := r.Operation.Extensions[name]
	return v, ok
}
