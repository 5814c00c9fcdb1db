// Package specdiff compares two OpenAPI documents and ranks each change by
// whether a client's recorded traffic touched it: a removed response field
// the client read, an enum value it sent, a parameter that became required
// on an operation it calls come before the changes it never met.
//
//	traffic, err := specdiff.ReadJournal(journalJSON) // or ReadCoverage
//	report, err := specdiff.Diff(specdiff.Options{Base: spec.OpenAPI, Revision: theirs, Traffic: traffic})
//	report.WriteText(os.Stdout)
//
// The rules and their ids (response-required-property-removed,
// new-required-request-parameter, ...) are oasdiff's checker; this package
// adds the traffic.
package specdiff

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/oasdiff/oasdiff/checker"
	"github.com/oasdiff/oasdiff/diff"
	"github.com/oasdiff/oasdiff/load"
)

// Options are what Diff compares: Base, the document the client was
// written against, with Revision, the document it will meet.
type Options struct {
	Base, Revision         []byte
	BaseName, RevisionName string // as the report names them; default "base" and "revision"
	// Traffic is what the client did; nil ranks by severity alone.
	Traffic *Traffic
}

// Severities of a change, from oasdiff's levels: breaking (ERR) breaks
// clients, warning (WARN) may break some, info (INFO) breaks none.
const (
	Breaking = "breaking"
	Warning  = "warning"
	Info     = "info"
)

// Report is the outcome of a comparison.
type Report struct {
	Base     string `json:"base"`
	Revision string `json:"revision"`
	// Traffic says what the ranking knew of the client.
	Traffic TrafficSummary `json:"traffic"`
	Summary Summary        `json:"summary"`
	// Changes are ranked: used by the traffic first, then by severity,
	// then in the base document's order.
	Changes []Change `json:"changes"`
}

// Summary counts a report's changes.
type Summary struct {
	Changes      int `json:"changes"`
	Breaking     int `json:"breaking"`
	Warning      int `json:"warning"`
	Info         int `json:"info"`
	Used         int `json:"used"`
	UsedBreaking int `json:"used_breaking"`
}

// Change is one difference between the documents.
type Change struct {
	Rank     int    `json:"rank"`
	Severity string `json:"severity"`
	// ID is oasdiff's rule id, like response-required-property-removed.
	ID          string `json:"id"`
	OperationID string `json:"operation_id,omitempty"`
	Method      string `json:"method,omitempty"`
	Path        string `json:"path,omitempty"`
	Message     string `json:"message"`
	Use         Use    `json:"use"`
}

// Use is how much of the recorded traffic a change touches.
type Use struct {
	// Used is whether the traffic touched the change: the operation was
	// called and, when the traffic tells, the changed element was used.
	Used bool `json:"used"`
	// Calls are the operation's recorded calls.
	Calls int `json:"calls"`
	// Known is whether the traffic tells about the changed element (a
	// parameter, a field, an enum value, a status); when it does, Hits of
	// Sample recorded exchanges touched it.
	Known  bool `json:"known"`
	Hits   int  `json:"hits"`
	Sample int  `json:"sample"`
	// Element is the changed element the traffic used, like
	// "response field credits_balance (200)".
	Element string `json:"element,omitempty"`
}

// tier orders uses: the element used, the operation called (the element
// unknown), the operation called but not the element, untouched.
func (u Use) tier() int {
	switch {
	case u.Known && u.Hits > 0:
		return 0
	case !u.Known && u.Calls > 0:
		return 1
	case u.Calls > 0:
		return 2
	}
	return 3
}

var severityOrder = map[string]int{Breaking: 0, Warning: 1, Info: 2}

// Diff compares the documents and ranks the changes. It reads o.Traffic
// (a Traffic is read by one Diff at a time).
func Diff(o Options) (r *Report, err error) {
	defer func() {
		// A document the checker trips on is the input's fault, not a
		// reason for a stack trace.
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("compare %s with %s: the checker failed: %v", cmp.Or(o.BaseName, "base"), cmp.Or(o.RevisionName, "revision"), p)
		}
	}()
	o.BaseName = cmp.Or(o.BaseName, "base")
	o.RevisionName = cmp.Or(o.RevisionName, "revision")
	base, err := parse(o.Base, o.BaseName)
	if err != nil {
		return nil, err
	}
	rev, err := parse(o.Revision, o.RevisionName)
	if err != nil {
		return nil, err
	}
	d, sources, err := diff.GetPathsDiff(diff.NewConfig(), []*load.SpecInfo{base}, []*load.SpecInfo{rev})
	if err != nil {
		return nil, fmt.Errorf("compare %s with %s: %w", o.BaseName, o.RevisionName, err)
	}
	found := checker.CheckBackwardCompatibilityUntilLevel(checker.NewConfig(checker.GetAllChecks()), d, sources, checker.INFO)

	ops := indexOperations(base.Spec, o.Base)
	order := func(method, path string) int {
		if i, ok := ops.order[method+" "+path]; ok {
			return i
		}
		return len(ops.order) // after the base's operations, in oasdiff's order
	}
	traffic := o.Traffic
	if traffic == nil {
		traffic = &Traffic{}
	}
	traffic.resolve(ops)
	localize := checker.NewDefaultLocalizer()
	type ranked struct {
		Change
		order, seq int
	}
	var all []ranked
	for i, c := range found {
		ch := Change{Severity: severity(c.GetLevel()), ID: c.GetId(), Method: c.GetOperation(), Path: c.GetPath(),
			OperationID: c.GetOperationId(), Message: strings.TrimSpace(c.GetUncolorizedText(localize))}
		if id := ops.ids[ch.Method+" "+ch.Path]; id != "" {
			ch.OperationID = id // the base's name: the one the traffic knows
		}
		args := make([]string, len(c.GetArgs()))
		for j, a := range c.GetArgs() {
			args[j] = fmt.Sprint(a)
		}
		var shared []string // the other properties a change to a shared schema is at
		if ac, ok := c.(checker.ApiChange); ok && ac.GetSharedSchema() != nil {
			shared = ac.GetSharedSchema().Properties
		}
		ch.Use = traffic.use(ch, args, shared)
		all = append(all, ranked{Change: ch, order: order(ch.Method, ch.Path), seq: i})
	}
	slices.SortStableFunc(all, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.Use.tier(), b.Use.tier()), cmp.Compare(severityOrder[a.Severity], severityOrder[b.Severity]),
			cmp.Compare(a.order, b.order), cmp.Compare(a.seq, b.seq))
	})
	r = &Report{Base: o.BaseName, Revision: o.RevisionName, Traffic: traffic.summary(), Changes: []Change{}}
	for i, c := range all {
		c.Rank = i + 1
		r.Changes = append(r.Changes, c.Change)
		r.Summary.Changes++
		switch c.Severity {
		case Breaking:
			r.Summary.Breaking++
		case Warning:
			r.Summary.Warning++
		default:
			r.Summary.Info++
		}
		if c.Use.Used {
			r.Summary.Used++
			if c.Severity == Breaking {
				r.Summary.UsedBreaking++
			}
		}
	}
	return r, nil
}

func severity(l checker.Level) string {
	switch l {
	case checker.ERR:
		return Breaking
	case checker.WARN:
		return Warning
	}
	return Info
}

// parse loads an OpenAPI 3 document, JSON or YAML, without following
// references outside it.
func parse(data []byte, name string) (*load.SpecInfo, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s is empty", name)
	}
	loader := openapi3.NewLoader() // a loader per document: its cache is keyed by name
	info, err := load.NewSpecInfoFromData(loader, data, name)
	if err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) || strings.Contains(err.Error(), "yaml") || strings.Contains(err.Error(), "unmarshal") {
			return nil, fmt.Errorf("%s is not an OpenAPI document (JSON or YAML): %w", name, err)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if v := info.Spec.OpenAPI; !strings.HasPrefix(v, "3.") {
		return nil, fmt.Errorf("%s is not an OpenAPI 3 document (its \"openapi\" field is %q)", name, v)
	}
	if info.Spec.Paths == nil || info.Spec.Paths.Len() == 0 {
		return nil, fmt.Errorf("%s has no paths", name)
	}
	return info, nil
}

// operations indexes the base document's operations.
type operations struct {
	ids   map[string]string // "GET /account" → getAccount
	order map[string]int    // "GET /account" → its place in the document
	byID  map[string]*operation
	list  []*operation
	base  string // the servers' path, like /api/v1
}

// operation is one operation of the base document.
type operation struct {
	id, method, path string
	segments         []string
	params           map[string]string // name → in
}

var methods = []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}

func indexOperations(doc *openapi3.T, raw []byte) *operations {
	ops := &operations{ids: map[string]string{}, order: map[string]int{}, byID: map[string]*operation{}}
	if len(doc.Servers) > 0 {
		if u, err := url.Parse(doc.Servers[0].URL); err == nil {
			ops.base = strings.TrimSuffix(u.Path, "/")
		}
	}
	for _, path := range pathOrder(raw, doc) {
		item := doc.Paths.Value(path)
		for _, m := range methods {
			op := item.GetOperation(m)
			if op == nil {
				continue
			}
			key := m + " " + path
			ops.order[key] = len(ops.order)
			o := &operation{id: op.OperationID, method: m, path: path, segments: strings.Split(strings.Trim(path, "/"), "/"), params: map[string]string{}}
			for _, p := range slices.Concat(item.Parameters, op.Parameters) {
				if p.Value != nil {
					o.params[p.Value.Name] = p.Value.In
				}
			}
			ops.list = append(ops.list, o)
			if o.id != "" {
				ops.ids[key] = o.id
				ops.byID[o.id] = o
			}
		}
	}
	return ops
}

// pathOrder lists the paths in the order the document writes them (a JSON
// document; else sorted).
func pathOrder(raw []byte, doc *openapi3.T) []string {
	var top struct {
		Paths json.RawMessage `json:"paths"`
	}
	var out []string
	if json.Unmarshal(raw, &top) == nil && len(top.Paths) > 0 {
		dec := json.NewDecoder(bytes.NewReader(top.Paths))
		if t, err := dec.Token(); err == nil && t == json.Delim('{') {
			for dec.More() {
				t, err := dec.Token()
				if err != nil {
					break
				}
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					break
				}
				if k, ok := t.(string); ok && doc.Paths.Value(k) != nil {
					out = append(out, k)
				}
			}
		}
	}
	if len(out) == doc.Paths.Len() {
		return out
	}
	return doc.Paths.InMatchingOrder()
}

// match finds the operation of a request path (with or without the
// servers' path).
func (ops *operations) match(method, path string) *operation {
	path = strings.TrimPrefix(path, ops.base)
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best *operation
	bestLiteral := -1
	for _, o := range ops.list {
		if o.method != strings.ToUpper(method) || len(o.segments) != len(segs) {
			continue
		}
		literal, ok := 0, true
		for i, s := range o.segments {
			switch {
			case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
			case s == segs[i]:
				literal++
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok && literal > bestLiteral {
			best, bestLiteral = o, literal
		}
	}
	return best
}
