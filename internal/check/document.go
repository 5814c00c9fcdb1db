package check

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/problem"
)

// An exchange held to openapi.json (the request, the status, the headers,
// the body) and to the error object every error status carries.

// ownedHeaders are the headers that rules of their own check on every
// response; the document's findings about them are not repeated.
var ownedHeaders = map[string]bool{
	"X-RateLimit-Limit": true, "X-RateLimit-Remaining": true, "X-RateLimit-Reset": true, "Retry-After": true,
}

// checkDocument holds an exchange to openapi.json and the error object.
func (k *Checker) checkDocument(c *verdict, p *Pending, x *Exchange, body any, bodyOK bool) {
	errorObjectBroken := false
	if x.Status >= 400 && x.ResponseSkipped == "" {
		c.apply(RuleErrorObject)
		if path, why := errorObjectProblem(body, bodyOK); path != "" {
			errorObjectBroken = true
			c.add(RuleErrorObject, path, "%s", why)
		}
	}
	switch {
	case errors.Is(p.findErr, contract.ErrNoOperation):
		c.apply(RuleOperation)
		if x.Status != http.StatusNotFound && x.Status != http.StatusMethodNotAllowed {
			c.add(RuleOperation, "status", "%s %s names no operation of openapi.json, yet the answer is %d, not 404 or 405", x.Method, x.URL.Path, x.Status)
		}
		return
	case p.findErr != nil:
		c.skip("openapi.json: " + p.findErr.Error())
		return
	}
	sh := k.shapes[p.opID]
	if sh == nil {
		c.skip("openapi.json: no operation " + p.opID)
		return
	}
	if x.Status < 400 && x.BodySkipped == "" {
		c.apply(RuleRequest)
		for _, v := range k.requestProblems(p, x) {
			c.addFrom(RuleRequest, sh.requestSource(v.Path), v.Path, "the request breaks openapi.json (%s), yet the answer is %d", v.Message, x.Status)
		}
	}
	walked := bodyOK && x.ResponseSkipped == ""
	sh.drift(c, x, body, walked)
	enumDrift := map[string]bool{}
	for _, d := range c.res.Drift {
		if d.Kind == DriftEnum {
			enumDrift[d.Path] = true
		}
	}
	resp := sh.responses[x.Status]
	var rb []byte
	if x.ResponseSkipped == "" {
		rb = x.ResponseBody
		c.apply(RuleBody)
	}
	r := &http.Request{Method: x.Method, URL: x.URL, Header: http.Header{}, Host: x.URL.Host}
	findings, err := k.api.ExchangeFindings(r, x.Status, x.ResponseHeader, rb)
	if err != nil {
		c.skip("openapi.json: " + err.Error())
	}
	c.apply(RuleStatus, RuleHeader, RuleContentType)
	for _, f := range findings {
		switch {
		case f.In == "status" && x.Status >= 200 && x.Status < 300:
			c.add(RuleStatus, "status", "%d: %s", x.Status, f.Reason)
		case f.In == "status":
			// drift: a status the document does not declare
		case f.In == "header" && ownedHeaders[f.Name]:
			// the rate-limit rules say it, on every response
		case f.In == "header":
			mark := ""
			if resp != nil {
				mark = resp.headers[http.CanonicalHeaderKey(f.Name)]
			}
			c.addFrom(RuleHeader, sh.source(mark), "headers."+f.Name, "%s", f.Reason)
		case errorObjectBroken:
			// error.object has said what is wrong with this body
		case f.In == "content_type":
			c.add(RuleContentType, "headers.Content-Type", "%s", f.Reason)
		case f.Keyword == "additionalProperties" && walked, f.Keyword == "enum" && enumDrift[f.Name]:
			// drift: a field or a value the document does not declare
		case x.ResponseSkipped == "":
			mark := ""
			if resp != nil {
				mark = resp.body.markAt(f.Pointer)
			}
			c.addFrom(RuleBody, sh.source(mark), f.Name, "%s", f.Reason)
		}
	}
}

// requestProblems validates the request against its operation.
func (k *Checker) requestProblems(p *Pending, x *Exchange) []Violation {
	r, err := http.NewRequest(x.Method, x.URL.String(), bytes.NewReader(x.Body))
	if err != nil {
		return []Violation{{Path: "request", Message: err.Error()}}
	}
	for name, vs := range x.Header {
		if !strings.EqualFold(name, "Authorization") {
			r.Header[name] = vs
		}
	}
	err = k.api.ValidateRequest(r, p.opID, p.vars, x.URL.Query())
	if err == nil {
		return nil
	}
	e := problem.AsError(err)
	vs, _ := e.Details["violations"].([]problem.Violation)
	if len(vs) == 0 {
		return []Violation{{Path: "request", Message: e.Message}}
	}
	out := make([]Violation, 0, len(vs))
	for _, v := range vs {
		path := "request." + v.In
		if v.Field != "" {
			path += "." + v.Field
		}
		out = append(out, Violation{Path: path, Message: v.Reason})
	}
	if more, _ := e.Details["more_violations"].(int); more > 0 {
		out = append(out, Violation{Path: "request", Message: strconv.Itoa(more) + " more violations (the first " + strconv.Itoa(len(vs)) + " are listed)"})
	}
	return out
}

// errorObjectProblem is where an error body breaks the error object, or "".
func errorObjectProblem(body any, ok bool) (path, why string) {
	m, isObject := body.(map[string]any)
	if !ok || !isObject {
		return "$", "an error status needs a JSON body { error: { code, message } }"
	}
	e, isObject := m["error"].(map[string]any)
	if !isObject {
		return "$.error", "an error status needs the error object { error: { code, message } }"
	}
	if code, _ := e["code"].(string); code == "" {
		return "$.error.code", "the error object needs a code (a non-empty string)"
	}
	if _, isString := e["message"].(string); !isString {
		return "$.error.message", "the error object needs a message (a string)"
	}
	return "", ""
}
