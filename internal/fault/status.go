package fault

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/internal/problem"
)

// Status answers any status the targeted operation declares, before the
// operation runs: the spec's error object with the document's code for it
// (or the code and message the rule names, among those the document
// allows), or a body of the rule's checked against the operation's
// response, or a named example of the document. A status, code or body
// the document does not allow is refused, unless the rule rehearses
// drift: then the answer is marked as outside the contract.
const Status = "status"

// ViaResponses names the shorthand POST /faults/responses: a status rule
// spent after count requests.
const ViaResponses = "responses"

// MaxBodyBytes bounds a status rule's body.
const MaxBodyBytes = 64 << 10

// MaxMessage bounds a status rule's message.
const MaxMessage = 500

func init() { Register(Status, new(status)) }

type status struct {
	Status int `json:"status,omitempty"`
	ErrorCode
	Message string          `json:"message,omitempty"`
	Example string          `json:"example,omitempty"`
	Body    json.RawMessage `json:"body,omitempty"`
	Drift   bool            `json:"drift,omitempty"`
}

func (k *status) Params() []*Param {
	return []*Param{
		Field(&k.Status, "Status", "the status to answer: one the targeted operation declares (an error status every operation declares when the rule targets none); absent with `example`: the operation's success status.").Min(200).Max(599),
		Note(&k.Code, "the error object's code, one of those the document allows for the status (`x-error-codes` of its response); absent: the first of them."),
		Field(&k.Message, "Message", "the error object's message; absent: the server's for the status.").Length(1, MaxMessage),
		Field(&k.Example, "Example", "the body is this named example of the document for the operation's answer of the status (Prism's `Prefer: example=`).").Length(1, 200),
		Field(&k.Body, "Body", "the answer's body, a JSON object sent byte for byte: checked against the operation's response schema for the status when the rule is made (a success answer needs one, or an example)."),
		Field(&k.Drift, "Drift", "the answer rehearses drift: a status, code or body the document does not allow is answered, and the journal (`outside_contract`) and the client report mark it."),
	}
}

func (*status) About() About {
	return About{Stage: Admit, Strikes: Classes, Targets: Targets,
		Doc: "any status the targeted operation declares, after authentication, the rate window and the scope, before the operation runs (nothing changes): the error object with the document's code for the status, or `code` and `message`, or a `body` (checked against the operation's response schema), or a named `example` of the document; `drift` answers what the document does not allow, marked as outside the contract. `POST /faults/responses` makes one spent after `count` hits.",
		Meets: "the status, with the error object (or the rule's body) and the headers of any answer (a 429 carries `Retry-After` to the window's reset and " +
			"`X-RateLimit-Remaining: 0`); the operation does not run",
		Shorthands: []Shorthand{{Via: ViaResponses, Endpoint: "POST /faults/responses",
			Doc: "a `" + Status + "` rule spent after `count` requests (`forced_responses`)"}}}
}

// forced is the answer the rule forces.
func (k *status) forced() Forced {
	return Forced{Status: k.Status, Code: k.Code, Message: k.Message, Example: k.Example, Body: k.Body, Drift: k.Drift}
}

// Check holds the rule to what its operation declares (at admission for
// a header's, whose operation is its request's).
func (k *status) Check(c *Checks) {
	switch {
	case k.Status == 0 && k.Example == "":
		c.Bad(&k.Status, "is required (or an example, for the operation's success status)")
	case k.Body != nil && (k.Code != "" || k.Message != "" || k.Example != ""):
		c.Bad(&k.Body, "give a body, or code and message, or an example: not two of them")
	case k.Example != "" && (k.Code != "" || k.Message != ""):
		c.Bad(&k.Example, "an example is the whole body: give it without code and message")
	case len(k.Body) > MaxBodyBytes:
		c.Bad(&k.Body, fmt.Sprintf("must be at most %d bytes", MaxBodyBytes))
	}
	op, known := c.Operation()
	if !known || k.Status == 0 && k.Example == "" {
		return
	}
	for _, v := range k.forced().Check(c.Service(), op) {
		c.Violation(v)
	}
}

// Admit forces the answer.
func (k *status) Admit(a Admission) error { return a.Answer(k.forced()) }

// Check lists what the document does not allow of the answer as an answer
// of op ("" or "*": of any operation), each violation named by the
// parameter: a status op does not declare (with the list of those it
// does), a code its response does not allow, an example it does not
// have, a body its schema refuses, a success without a body. Drift waives
// all but the example.
func (f Forced) Check(svc Service, op string) []problem.Violation {
	var out []problem.Violation
	bad := func(field, reason string, allowed ...any) {
		out = append(out, problem.Violation{In: "body", Field: field, Reason: reason, Allowed: allowed})
	}
	if op == "" || op == "*" {
		switch {
		case f.Body != nil:
			bad("body", "is an answer of one operation: target it (operation), its response schema judges the body")
		case f.Example != "":
			bad("example", "is an answer of one operation: target it (operation)")
		case f.Drift:
		case !slices.Contains(svc.ErrorStatuses(), f.Status):
			all := svc.ErrorStatuses()
			bad("status", fmt.Sprintf("%d is not an error status every operation declares (%s): target an operation, or give drift: true to rehearse an answer outside the contract",
				f.Status, statusList(all)), anys(all)...)
		case f.Code != "" && !slices.Contains(svc.ErrorCodes("", f.Status), f.Code):
			codes := svc.ErrorCodes("", f.Status)
			bad("code", fmt.Sprintf("the document allows %s in a %d answer", strings.Join(codes, ", "), f.Status), anys(codes)...)
		}
		return out
	}
	status := f.Status
	if status == 0 {
		status = svc.Success(op)
	}
	declared := svc.DeclaredStatuses(op)
	if !slices.Contains(declared, status) && !f.Drift {
		bad("status", fmt.Sprintf("%s does not declare %d: it declares %s; give drift: true to rehearse an answer outside the contract",
			op, status, statusList(declared)), anys(declared)...)
		return out
	}
	switch {
	case f.Example != "":
		if names := svc.Examples(op, status); !slices.Contains(names, f.Example) {
			bad("example", fmt.Sprintf("%s has no example %q of its %d answer (it has %s)", op, f.Example, status, listOr(names, "none")), anys(names)...)
		}
	case f.Body != nil:
		if !f.Drift {
			out = append(out, svc.CheckAnswer(op, status, f.Body)...)
		}
	case status < 400:
		bad("status", fmt.Sprintf("%d is a success: give its body (body) or an example of the document (example)", status))
	case f.Code != "" && !f.Drift:
		if codes := svc.ErrorCodes(op, status); !slices.Contains(codes, f.Code) {
			bad("code", fmt.Sprintf("%s's %d answer allows %s", op, status, listOr(codes, "no code")), anys(codes)...)
		}
	}
	return out
}

// statusList is "200, 401 and 429".
func statusList(s []int) string {
	parts := make([]string, len(s))
	for i, st := range s {
		parts[i] = strconv.Itoa(st)
	}
	return andList(parts, "and")
}
