package check

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mediamock/mediamock/internal/contract"
)

// Drift is something an answer carries that openapi.json does not declare:
// a body field, an enum value, a header, a status. It breaks no rule (the
// document may simply be behind the service) and is reported apart from
// violations.
type Drift struct {
	// Kind is field, enum, header or status.
	Kind string `json:"kind"`
	// Path is where, as for a violation: $.assets[0].seed, headers.X-Trace,
	// status.
	Path    string `json:"path"`
	Message string `json:"message"`
	Source
}

// The kinds of drift.
const (
	DriftField  = "field"
	DriftEnum   = "enum"
	DriftHeader = "header"
	DriftStatus = "status"
)

// DriftKinds lists the kinds of drift in the order summaries list them.
var DriftKinds = []string{DriftField, DriftEnum, DriftHeader, DriftStatus}

// transportHeaders are the response headers of HTTP itself, of its
// transport and of the caches and CDNs in between: never drift, whatever
// the document declares.
var transportHeaders = map[string]bool{
	"Accept-Ranges": true, "Age": true, "Alt-Svc": true, "Cache-Control": true, "Connection": true,
	"Content-Encoding": true, "Content-Length": true, "Content-Type": true, "Date": true, "Etag": true,
	"Expires": true, "Keep-Alive": true, "Last-Modified": true, "Pragma": true, "Server": true,
	"Strict-Transport-Security": true, "Trailer": true, "Transfer-Encoding": true, "Vary": true, "Via": true,
}

// transportHeader reports whether a response header is HTTP's own (above,
// and every Access-Control-* of CORS).
func transportHeader(canonical string) bool {
	return transportHeaders[canonical] || strings.HasPrefix(canonical, "Access-Control-")
}

// node is a response or request schema as the drift walk needs it: its
// allOf, oneOf and anyOf merged, $refs followed, computed once per
// document.
type node struct {
	mark   string           // x-mock-decision of the schema or of a part of it
	closed string           // x-mock-decision-closed: refusing undeclared properties is that decision
	props  map[string]*node // declared properties
	extra  *node            // additionalProperties as a schema: a map's values
	strict bool             // it declares properties: another one is drift
	items  *node
	enum   []string // the string values allowed; nil: any string
}

// nodes builds and remembers the nodes of one document.
type nodes struct {
	memo map[string]*node
}

func (ns *nodes) of(schemas ...*openapi3.Schema) *node {
	var flat []*openapi3.Schema
	for _, s := range schemas {
		flat = flatten(s, flat)
	}
	if len(flat) == 0 {
		return nil
	}
	keys := make([]string, len(flat))
	for i, s := range flat {
		keys[i] = fmt.Sprintf("%p", s)
	}
	sort.Strings(keys)
	key := strings.Join(keys, ",")
	if n := ns.memo[key]; n != nil {
		return n
	}
	n := &node{}
	ns.memo[key] = n // before the children: schemas may refer to themselves
	for _, s := range schemas {
		if n.mark == "" {
			n.mark, _ = s.Extensions["x-mock-decision"].(string)
		}
	}
	props := map[string][]*openapi3.Schema{}
	var extra, items []*openapi3.Schema
	var enum []string
	open, anyString := false, false
	for _, s := range flat {
		if n.mark == "" {
			n.mark, _ = s.Extensions["x-mock-decision"].(string)
		}
		if n.closed == "" {
			n.closed, _ = s.Extensions["x-mock-decision-closed"].(string)
		}
		for name, p := range s.Properties {
			if p != nil && p.Value != nil {
				props[name] = append(props[name], p.Value)
			}
		}
		ap := s.AdditionalProperties
		switch {
		case ap.Schema != nil && ap.Schema.Value != nil:
			extra = append(extra, ap.Schema.Value)
		case ap.Has != nil && *ap.Has:
			open = true
		case ap.Has != nil:
			n.strict = true
		}
		if s.Items != nil && s.Items.Value != nil {
			items = append(items, s.Items.Value)
		}
		if s.Type.Includes(openapi3.TypeString) && len(s.Enum) == 0 {
			anyString = true
		}
		for _, v := range s.Enum {
			if v, ok := v.(string); ok && !slices.Contains(enum, v) {
				enum = append(enum, v)
			}
		}
	}
	if len(props) > 0 {
		n.strict = true
	}
	if open || len(extra) > 0 {
		n.strict = false
	}
	if !anyString {
		n.enum = enum
	}
	if len(props) > 0 {
		n.props = make(map[string]*node, len(props))
		for name, ss := range props {
			n.props[name] = ns.of(ss...)
		}
	}
	if len(extra) > 0 {
		n.extra = ns.of(extra...)
	}
	if len(items) > 0 {
		n.items = ns.of(items...)
	}
	return n
}

// flatten adds s and the parts of its allOf, oneOf and anyOf to out: a
// property declared by any of them is declared.
func flatten(s *openapi3.Schema, out []*openapi3.Schema) []*openapi3.Schema {
	if s == nil || slices.Contains(out, s) {
		return out
	}
	out = append(out, s)
	for _, list := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
		for _, r := range list {
			if r != nil {
				out = flatten(r.Value, out)
			}
		}
	}
	return out
}

// child is the node of a property or an item below n, or nil when n does
// not declare it.
func (n *node) child(seg string) *node {
	if n == nil {
		return nil
	}
	if c := n.props[seg]; c != nil {
		return c
	}
	if _, err := strconv.Atoi(seg); err == nil && n.items != nil {
		return n.items
	}
	return n.extra
}

// markAt is the decision that labels a finding at ptr: the mark of the
// nearest node on the way that has one, or, for a property n does not
// declare, n's x-mock-decision-closed.
func (n *node) markAt(ptr []string) string {
	mark := ""
	for i, seg := range ptr {
		if n == nil {
			break
		}
		if n.mark != "" {
			mark = n.mark
		}
		c := n.child(seg)
		if c == nil {
			if i == len(ptr)-1 && n.closed != "" {
				return n.closed
			}
			return mark
		}
		n = c
	}
	if n != nil && n.mark != "" {
		mark = n.mark
	}
	return mark
}

// response is what one declared status of an operation declares.
type response struct {
	mark    string            // the response's x-mock-decision: its status is that decision
	body    *node             // the application/json schema; nil: none
	headers map[string]string // canonical name -> its x-mock-decision ("" when none)
}

// shape is what one operation declares, for the drift walk and for labels.
type shape struct {
	section   string            // the specification's section of the operation
	responses map[int]*response // by status
	anyHeader map[string]string // headers of every response, for a status not declared
	request   *node             // the JSON request body
	params    map[string]string // "query.limit" -> x-mock-decision
}

// shapes reads, once, what every operation of the document declares.
func shapes(api *contract.Contract) map[string]*shape {
	ns := &nodes{memo: map[string]*node{}}
	out := map[string]*shape{}
	for _, op := range api.Operations() {
		route := api.Route(op.ID)
		if route == nil {
			continue
		}
		o := route.Operation
		sh := &shape{responses: map[int]*response{}, anyHeader: map[string]string{}, params: map[string]string{}}
		sh.section = "Endpoints: " + op.Method + " " + op.Path
		if v, ok := o.Extensions["x-spec-section"].(string); ok {
			sh.section = v
		}
		for code, ref := range o.Responses.Map() {
			st, err := strconv.Atoi(code)
			if err != nil || ref == nil || ref.Value == nil {
				continue
			}
			r := &response{headers: map[string]string{}}
			r.mark, _ = ref.Value.Extensions["x-mock-decision"].(string)
			if mt := ref.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
				r.body = ns.of(mt.Schema.Value)
			}
			for name, h := range ref.Value.Headers {
				mark := ""
				if h != nil && h.Value != nil {
					mark, _ = h.Value.Extensions["x-mock-decision"].(string)
				}
				r.headers[http.CanonicalHeaderKey(name)] = mark
				sh.anyHeader[http.CanonicalHeaderKey(name)] = mark
			}
			sh.responses[st] = r
		}
		if rb := o.RequestBody; rb != nil && rb.Value != nil {
			if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
				sh.request = ns.of(mt.Schema.Value)
			}
		}
		for _, p := range o.Parameters {
			if p != nil && p.Value != nil {
				mark, _ := p.Value.Extensions["x-mock-decision"].(string)
				sh.params[p.Value.In+"."+p.Value.Name] = mark
			}
		}
		out[op.ID] = sh
	}
	return out
}

// source labels a finding of the document: the decision that marks where
// it is, else the operation's section of the specification.
func (sh *shape) source(mark string) Source {
	if mark != "" {
		return decision(mark)
	}
	return spec(sh.section)
}

// drift lists what an answer carries that its operation does not declare:
// its status, its headers, and, below the body's schema, its fields and
// enum values.
func (sh *shape) drift(c *verdict, x *Exchange, body any, bodyOK bool) {
	r := sh.responses[x.Status]
	if r == nil && (x.Status < 200 || x.Status >= 300) {
		// An undeclared status: a success the specification names (201 for a
		// POST, 200 otherwise) is the openapi.status rule's; any other, drift.
		src := sh.source("")
		if x.Status >= 400 {
			src = spec("Errors")
			if d := sh.statusDecision(); d != "" {
				src = decision(d)
			}
		}
		c.drift(DriftStatus, "status", src, "%d is a status the operation does not declare", x.Status)
	}
	declared := sh.anyHeader
	if r != nil {
		declared = r.headers
	}
	var names []string
	for name := range x.ResponseHeader {
		ck := http.CanonicalHeaderKey(name)
		if _, ok := declared[ck]; ok || transportHeader(ck) {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c.drift(DriftHeader, "headers."+name, sh.source(""), "the operation does not declare the header %s", name)
	}
	if r != nil && r.body != nil && bodyOK {
		before := len(c.res.Drift)
		var buf [256]byte
		walk(c, sh, r.body, body, append(buf[:0], '$'), "")
		found := c.res.Drift[before:]
		sort.SliceStable(found, func(i, j int) bool { return found[i].Path < found[j].Path })
	}
}

// statusDecision is the decision that chose the operation's error
// statuses: the mark of its first error response that has one.
func (sh *shape) statusDecision() string {
	codes := make([]int, 0, len(sh.responses))
	for st := range sh.responses {
		codes = append(codes, st)
	}
	slices.Sort(codes)
	for _, st := range codes {
		if st >= 400 && sh.responses[st].mark != "" {
			return sh.responses[st].mark
		}
	}
	return ""
}

// walk reports the fields and enum values of v that n does not declare.
// The path is built in one buffer and made a string only for a finding;
// the findings of one body are sorted by path afterwards, so that the
// walk can follow the maps' own order.
func walk(c *verdict, sh *shape, n *node, v any, path []byte, mark string) {
	if n.mark != "" {
		mark = n.mark
	}
	switch t := v.(type) {
	case map[string]any:
		for k, kv := range t {
			p := append(append(path, '.'), k...)
			if cn := n.child(k); cn != nil {
				walk(c, sh, cn, kv, p, mark)
			} else if n.strict {
				m := mark
				if n.closed != "" {
					m = n.closed
				}
				c.drift(DriftField, string(p), sh.source(m), "the document does not declare the field %s", k)
			}
		}
	case []any:
		if n.items == nil {
			return
		}
		for i, item := range t {
			p := append(strconv.AppendInt(append(path, '['), int64(i), 10), ']')
			walk(c, sh, n.items, item, p, mark)
		}
	case string:
		if n.enum != nil && !slices.Contains(n.enum, t) {
			c.drift(DriftEnum, string(path), sh.source(mark), "%q is not one of the values the document lists (%s)", t, strings.Join(n.enum, ", "))
		}
	}
}

// requestSource labels a violation of the request at path
// (request.body.options.title, request.query.limit): the decision that
// marks that field or parameter, else the operation's section.
func (sh *shape) requestSource(path string) Source {
	rest, ok := strings.CutPrefix(path, "request.body")
	if ok {
		var ptr []string
		for _, seg := range strings.FieldsFunc(rest, func(r rune) bool { return r == '.' || r == '[' || r == ']' }) {
			ptr = append(ptr, seg)
		}
		return sh.source(sh.request.markAt(ptr))
	}
	if rest, ok := strings.CutPrefix(path, "request."); ok {
		return sh.source(sh.params[rest])
	}
	return sh.source("")
}

// DriftCount is one kind of drift at one place of one operation; the
// checker counts how often it saw each.
type DriftCount struct {
	Kind      string `json:"kind"`
	Operation string `json:"operation"`
	// Path is where, with every array index written [*].
	Path string `json:"path"`
	Source
}

// anyIndex writes every array index of a path as [*]: $.data[3].seed is
// $.data[*].seed.
func anyIndex(path string) string {
	if !strings.Contains(path, "[") {
		return path
	}
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if path[i] == '[' {
			if j := strings.IndexByte(path[i:], ']'); j > 0 {
				if _, err := strconv.Atoi(path[i+1 : i+j]); err == nil {
					b.WriteString("[*]")
					i += j
					continue
				}
			}
		}
		b.WriteByte(path[i])
	}
	return b.String()
}

// DriftSeen is one line of DriftStats.
type DriftSeen struct {
	DriftCount
	Count int `json:"count"`
}

// DriftStats lists the drift seen so far, by kind, operation and path,
// with how often: most often first, then by kind, operation and path.
func (k *Checker) DriftStats() []DriftSeen {
	k.mu.Lock()
	out := make([]DriftSeen, 0, len(k.drift))
	for d, n := range k.drift {
		out = append(out, DriftSeen{DriftCount: d, Count: n})
	}
	k.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		if a.Kind != b.Kind {
			return slices.Index(DriftKinds, a.Kind) < slices.Index(DriftKinds, b.Kind)
		}
		if a.Operation != b.Operation {
			return a.Operation < b.Operation
		}
		return a.Path < b.Path
	})
	return out
}
