package fault

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/mediamock/mediamock/internal/problem"
)

// Checks collects what a kind's own check (Check) finds wrong with its
// parameters, each named by a pointer to its field.
type Checks struct {
	kind  Kind
	reg   *registered
	bad   func(field, reason string, allowed ...any)
	names map[uintptr]string
	svc   Service
	spec  *Spec
	in    string
	add   func(v problem.Violation)
}

// Service is what validation knows of the service's operations
// (openapi.json): which exist, and the answers each declares.
// *contract.Contract implements it.
type Service interface {
	// Has reports whether an operation exists.
	Has(op string) bool
	// DeclaredStatuses lists the statuses an operation declares, in order.
	DeclaredStatuses(op string) []int
	// ErrorStatuses are the error statuses every operation declares.
	ErrorStatuses() []int
	// Success is an operation's success status.
	Success(op string) int
	// ErrorCodes lists the error codes an operation's answer of status
	// allows, the one a forced answer carries first; with op "", those of
	// any operation.
	ErrorCodes(op string, status int) []string
	// Examples names the examples of an operation's answer of status.
	Examples(op string, status int) []string
	// CheckAnswer judges a JSON body as an operation's answer of status.
	CheckAnswer(op string, status int, body []byte) []problem.Violation
}

// Service is the service's operations, for checks that hold a
// parameter to what an operation declares.
func (c *Checks) Service() Service { return c.svc }

// Operation is the operation the spec targets ("" or "*": any), and
// whether it is known now: a Mock-Fault header's fault strikes its own
// request, whose operation is known when the request is admitted (the
// kind checks it then).
func (c *Checks) Operation() (op string, known bool) {
	return c.spec.Operation, c.in != "header" || c.spec.Operation != ""
}

// Violation reports a violation found by another check (a body held to
// a schema), its In set to where the spec was given.
func (c *Checks) Violation(v problem.Violation) {
	v.In = c.in
	c.add(v)
}

// Bad reports a violation of the parameter field points to.
func (c *Checks) Bad(field any, reason string, allowed ...any) {
	c.bad(c.name(field), reason, allowed...)
}

// name is the name of the parameter a pointer into the kind points to.
func (c *Checks) name(field any) string {
	if c.names == nil {
		c.names = map[uintptr]string{}
		v := reflect.ValueOf(c.kind).Elem()
		for _, p := range c.reg.params {
			c.names[v.FieldByIndex(p.index).Addr().Pointer()] = p.Name
		}
	}
	name, ok := c.names[reflect.ValueOf(field).Pointer()]
	if !ok {
		panic("fault: kind " + c.reg.name + " checks a field that is none of its parameters")
	}
	return name
}

// Validate checks a spec whole, in the field named `in` (body, header,
// path): its kind, the parameters it gives (each a parameter of the kind,
// within the facts declared for it, the required ones given), the
// targeting the kind takes, and the kind's own checks. Every violation is
// reported, and nothing of a spec with one is kept. svc tells which
// operations exist and what each declares. The control API's body, the
// Mock-Fault header and the Go API all come here.
func Validate(s *Spec, in string, svc Service) error {
	var v []problem.Violation
	bad := func(field, reason string, allowed ...any) {
		v = append(v, problem.Violation{In: in, Field: field, Reason: reason, Allowed: allowed})
	}
	k := lookup(s.Kind)
	if k == nil {
		if s.Kind == "" {
			bad("kind", "is required", anys(Kinds())...)
		} else {
			bad("kind", fmt.Sprintf("unknown fault kind %q", s.Kind), anys(Kinds())...)
		}
		return problem.InvalidError(v)
	}

	// Its parameters.
	for _, p := range params {
		if !p.set(s) {
			continue
		}
		if k.param(p.Name) == nil {
			bad(p.Name, fmt.Sprintf("is not a parameter of %s (it takes %s)", s.Kind, listOr(k.paramNames(), "none")))
			continue
		}
		p.check(s, func(reason string, allowed ...any) { bad(p.Name, reason, allowed...) })
	}
	for _, p := range k.params {
		if p.required && !p.set(s) {
			bad(p.Name, "is required", p.enum...)
		}
	}

	// Its targeting.
	for _, t := range targeting(s) {
		switch {
		case k.takes(t):
			// a class is checked below
		case k.about.Strikes == nil:
			bad(t, fmt.Sprintf("%s is decided in the simulation, for jobs and deliveries, not requests: it takes %s", s.Kind, listOr(k.about.Targets, "no targeting")))
		default:
			bad(t, fmt.Sprintf("%s does not take %s (it takes %s)", s.Kind, t, listOr(k.about.Targets, "no targeting")))
		}
	}
	if s.Class != "" && k.about.Strikes != nil && !slices.Contains(k.about.Strikes, s.Class) {
		bad("class", fmt.Sprintf("%s strikes %s only", s.Kind, strings.Join(k.about.Strikes, ", ")), anys(k.about.Strikes)...)
	}
	if s.Operation != "" && k.takes(TargetOperation) {
		switch {
		case s.Class == Files:
			bad("operation", "files are not operations: leave operation out, or target the api or mcp class")
		case s.Operation != "*" && !svc.Has(s.Operation):
			bad("operation", fmt.Sprintf("unknown operation %q", s.Operation))
		}
	}
	if m := k.modalities(); s.Modality != "" && !slices.Contains(m, s.Modality) {
		bad("modality", fmt.Sprintf("unknown modality %q", s.Modality), anys(m)...)
	}
	if p := s.Probability; p != nil && (math.IsNaN(*p) || *p < 0 || *p > 1) {
		bad("probability", "must be between 0 and 1")
	}
	if s.First < 0 || s.First > MaxFirst {
		bad("first", fmt.Sprintf("must be between 0 and %d", MaxFirst))
	}

	// Its own checks, over several parameters.
	kind := k.decode(s)
	if c, ok := kind.(checker); ok {
		c.Check(&Checks{kind: kind, reg: k, bad: bad, svc: svc, spec: s, in: in, add: func(x problem.Violation) { v = append(v, x) }})
	}
	if len(v) > 0 {
		return problem.InvalidError(v)
	}
	return nil
}

// targeting lists the targeting fields a spec sets.
func targeting(s *Spec) []string {
	var out []string
	for _, t := range []struct {
		name string
		on   bool
	}{{TargetClass, s.Class != ""}, {TargetOperation, s.Operation != ""}, {TargetModality, s.Modality != ""},
		{TargetProbability, s.Probability != nil}, {TargetFirst, s.First != 0}} {
		if t.on {
			out = append(out, t.name)
		}
	}
	return out
}

// matches reports whether a spec of kind r (decoded as k) targets a
// request at stage p: its stage and class, its targeting, and what the
// kind narrows it to (a file's first download, a request of a session).
func matches(r *registered, k Kind, s *Spec, p Stage, req Request) bool {
	if r.about.Stage != p || (s.Class != "" && s.Class != req.Class) || !slices.Contains(r.about.Strikes, req.Class) {
		return false
	}
	if s.Operation != "" && s.Operation != "*" && s.Operation != req.Operation {
		return false
	}
	if s.Modality != "" && s.Modality != req.Modality {
		return false
	}
	if t, ok := k.(targeter); ok {
		return t.Targets(req)
	}
	return true
}

// A targeter is a kind that strikes fewer requests than its targeting
// says.
type targeter interface {
	// Targets reports whether the kind's rule may strike the request.
	Targets(r Request) bool
}

// A striker is a kind that remembers the requests its rule struck.
type striker interface {
	// Struck records a request the rule struck (under the rules' lock).
	Struck(r Request)
}

// Fits checks that a kind can strike a request of class (a Mock-Fault
// header on the request).
func Fits(kind, class string) error {
	var strikes []string
	if r := lookup(kind); r != nil {
		strikes = r.about.Strikes
	}
	if !slices.Contains(strikes, class) {
		return problem.InvalidError([]problem.Violation{{In: "header", Field: Header,
			Reason: fmt.Sprintf("%s strikes %s requests only; this is a request of the %s class", kind, strings.Join(strikes, ", "), class)}})
	}
	return nil
}
