package fault

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/internal/problem"
)

// Header is the request header that asks for a fault on that request
// alone: a kind, then parameters as name=value, separated by semicolons:
//
//	Mock-Fault: truncate; after_bytes=1024
//	Mock-Fault: latency; distribution=lognormal; median_ms=200; sigma=0.5
//	Mock-Fault: reset; probability=0.5
//	Mock-Fault: evolve; reorder=false
const Header = "Mock-Fault"

// ParseHeader reads a Mock-Fault header's values into a spec and checks it
// as the control API checks a rule's (Validate). Each parameter is read by
// the type of its field. The targeting of rules (class, operation,
// modality, first) has no place on one request; probability has.
func ParseHeader(values []string, svc Service) (Spec, error) {
	invalid := func(reason string) error {
		return problem.InvalidError([]problem.Violation{{In: "header", Field: Header, Reason: reason}})
	}
	if len(values) != 1 {
		return Spec{}, invalid("give one fault per request, in one header")
	}
	parts := strings.Split(values[0], ";")
	s := Spec{Kind: strings.TrimSpace(parts[0])}
	k := lookup(s.Kind)
	if k == nil {
		return Spec{}, problem.InvalidError([]problem.Violation{{In: "header", Field: Header,
			Reason: fmt.Sprintf("unknown fault kind %q", s.Kind), Allowed: anys(RequestKinds())}})
	}
	if k.about.Strikes == nil {
		return Spec{}, invalid(fmt.Sprintf("%s is decided in the simulation, for jobs and deliveries, not for one request: add it as a rule (POST /_mock/faults/rules)", s.Kind))
	}
	seen := map[string]bool{}
	for _, p := range parts[1:] {
		name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || value == "" {
			return Spec{}, invalid(fmt.Sprintf("parameter %q is not name=value", strings.TrimSpace(p)))
		}
		if seen[name] {
			return Spec{}, invalid(fmt.Sprintf("parameter %s is given twice", name))
		}
		seen[name] = true
		if err := setParam(&s, name, value); err != nil {
			return Spec{}, invalid(fmt.Sprintf("parameter %s: %v", name, err))
		}
	}
	if err := Validate(&s, "header", svc); err != nil {
		// Name the header and the parameter: "Mock-Fault: after_bytes".
		e := problem.AsError(err)
		if vs, ok := e.Details["violations"].([]problem.Violation); ok {
			for i := range vs {
				vs[i].Field = Header + ": " + vs[i].Field
			}
			return Spec{}, problem.InvalidError(vs)
		}
		return Spec{}, err
	}
	return s, nil
}

// setParam sets the field of a spec a header's name=value names: any
// kind's parameter (Validate then says whether the spec's kind takes it),
// or probability.
func setParam(s *Spec, name, value string) error {
	switch name {
	case TargetProbability:
		return probability.parse(s, value)
	case TargetClass, TargetOperation, TargetModality, TargetFirst:
		return fmt.Errorf("targets rules of the control API; a header's fault is its own request's")
	}
	p := byParam[name]
	if p == nil || p.specIndex == nil {
		return fmt.Errorf("unknown parameter")
	}
	return p.parse(s, value)
}

// probability is the one targeting field a header gives, read as a
// parameter is.
var probability = func() *Param {
	f, _ := reflect.TypeFor[Spec]().FieldByName("Probability")
	return &Param{Name: TargetProbability, goType: f.Type, specIndex: f.Index}
}()

// The rules a hit of a request's own header names (Hit.Rule), in the
// journal's fault_rule.
const (
	HeaderRule = "header" // a Mock-Fault header
	PreferRule = "prefer" // a Prefer header (Prism's convention)
)

// PreferHeader is the header Prism's clients ask for an answer with, as
// RFC 7240 preferences: code=404 (the answer of that status), example=NAME
// (a named example of the document), dynamic=true|false (Prism's
// generated answers; here the simulation answers either way). The server
// honours it where it honours Mock-Fault, as a status fault of the
// request: code and example become its status and example, held to what
// the request's operation declares. Other preferences are ignored, as RFC
// 7240 asks.
const PreferHeader = "Prefer"

// preferNames are the Prefer preferences by the status parameter each
// stands for.
var preferNames = map[string]string{"status": "code", "example": "example"}

// PreferName is the preference of Prefer a parameter of the status kind
// is asked with (status: code).
func PreferName(param string) string {
	if n, ok := preferNames[param]; ok {
		return n
	}
	return param
}

// ParsePrefer reads the Prefer header's values (ParseHeader's rules for
// Mock-Fault): the status fault they ask for, and whether they ask for
// one (code and example do; a code of success without an example is the
// simulation's answer, as dynamic=... is). A preference is name=value;
// several are separated by commas or semicolons, the first of a name
// counts. Prism's query parameters (__code=404, __example=NAME,
// __dynamic=true) come as values too: PreferQuery makes them one.
func ParsePrefer(values []string, svc Service) (Spec, bool, error) {
	invalid := func(name, reason string) error {
		return problem.InvalidError([]problem.Violation{{In: "header", Field: PreferHeader + ": " + name, Reason: reason}})
	}
	s := Spec{Kind: Status}
	seen := map[string]bool{}
	for _, v := range values {
		for _, p := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' }) {
			name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
			name, value = strings.ToLower(strings.TrimSpace(name)), strings.Trim(strings.TrimSpace(value), `"`)
			if seen[name] {
				continue
			}
			seen[name] = true
			switch name {
			case "code":
				st, err := strconv.Atoi(value)
				if err != nil || st < 100 || st > 599 {
					return Spec{}, false, invalid(name, fmt.Sprintf("%q is not an HTTP status", value))
				}
				s.Status = st
			case "example":
				if value == "" {
					return Spec{}, false, invalid(name, "names an example of the document")
				}
				s.Example = value
			case "dynamic":
				if value != "true" && value != "false" {
					return Spec{}, false, invalid(name, "must be true or false")
				}
			}
		}
	}
	if s.Status == 0 && s.Example == "" || s.Status >= 200 && s.Status < 300 && s.Example == "" {
		// Nothing asked, or a success without an example: the simulation
		// answers (Prism's would pick the first example).
		return Spec{}, false, nil
	}
	if err := Validate(&s, "header", svc); err != nil {
		e := problem.AsError(err)
		if vs, ok := e.Details["violations"].([]problem.Violation); ok {
			for i := range vs {
				vs[i].Field = PreferHeader + ": " + PreferName(vs[i].Field)
			}
			return Spec{}, false, problem.InvalidError(vs)
		}
		return Spec{}, false, err
	}
	return s, true, nil
}

// PreferQuery is Prism's query parameters (__code, __example, __dynamic)
// as a Prefer value, "" when the query has none.
func PreferQuery(query map[string][]string) string {
	var parts []string
	for _, name := range []string{"code", "example", "dynamic"} {
		if v := query["__"+name]; len(v) > 0 {
			parts = append(parts, name+"="+v[0])
		}
	}
	return strings.Join(parts, ", ")
}
