// Package check holds exchanges seen from outside a server of the API to
// openapi.json and to the rules of the specification that a document
// cannot express (rate-limit headers, the error object, credits, statuses
// that only move forward, list order and cursors). The validating proxy
// and the conformance suite both use it; it links nothing of the
// simulator.
//
//	k := check.New(api)
//	p := k.Begin(req.Method, req.URL, req.Header.Get("Authorization"))
//	// ... send the request, read the response ...
//	res := k.Finish(p, &check.Exchange{Method: req.Method, URL: req.URL, Status: resp.StatusCode, ...})
//
// Tokens never reach a finding: a credential is known by a digest and
// shown masked (Mask).
package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/problem"
)

// Violation is one rule an exchange breaks.
type Violation struct {
	Rule string `json:"rule"`
	// Path is where: a JSON path in the response body ($.assets[0].status),
	// a response header (headers.Retry-After), a part of the request
	// (request.body.prompt, request.query.limit) or the status.
	Path    string `json:"path"`
	Message string `json:"message"`
	// Source says whose the rule broken here is: the specification's, or
	// one of this mock's decisions.
	Source
}

// Exchange is one request and its response, as a client or a proxy sees
// them.
type Exchange struct {
	Method string
	// URL is the request's address; its path starts with the base path
	// /api/v1 when the request is meant for the API.
	URL *url.URL
	// Header is the request's headers: Authorization names the credential
	// (never kept), Content-Type the body's media type.
	Header http.Header
	// Body is the request body; BodySkipped says why it was not kept.
	Body        []byte
	BodySkipped string
	// Status, ResponseHeader and ResponseBody are the response;
	// ResponseSkipped says why the body was not kept.
	Status          int
	ResponseHeader  http.Header
	ResponseBody    []byte
	ResponseSkipped string
}

// Result is what the checker found in one exchange.
type Result struct {
	Operation  string      `json:"operation,omitempty"`
	Violations []Violation `json:"violations,omitempty"`
	// Drift is what the answer carries that openapi.json does not declare.
	Drift   []Drift  `json:"drift,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
}

// RuleStats counts, for one rule, the exchanges it applied to and the
// violations it found.
type RuleStats struct {
	Applied    int `json:"applied"`
	Violations int `json:"violations"`
}

// BasePath is where the API's operations live.
const BasePath = "/api/v1"

// Checker holds exchanges to openapi.json and to the rules of the
// specification, remembering across exchanges what those rules need:
// balances, asset statuses, in-flight calls. It is safe for concurrent use.
//
// Call Begin when a request starts and Finish when its response is known;
// the order of these calls is how the checker knows which exchanges
// overlapped.
type Checker struct {
	api    *contract.Contract
	shapes map[string]*shape // by operationId: what each declares, read once

	mu     sync.Mutex
	clock  uint64                 // begin and end events of every exchange, in order
	creds  map[string]*credential // by token digest
	groups map[string]*group      // by workspace ("ws:7") or, while unknown, credential ("cred:…")
	// Spending calls of credentials whose workspace is unknown may be of
	// any workspace: every group counts them.
	unknownSpend         uint64
	unknownSpendInflight int
	allSpend             uint64 // begin and end events of every spending call
	allSpendInflight     int
	stats                map[string]*RuleStats
	drift                map[DriftCount]int // by kind, operation and path ([*] for every index)
}

type credential struct {
	workspace uint64
	known     bool // the workspace is known (from GET /account)
	accepted  bool // answered other than 401 at least once
}

// group is what the checker knows of one workspace.
type group struct {
	spend         uint64 // begin and end events of its spending calls
	spendInflight int
	balance       int64
	balanceKnown  bool
	balanceSpend  uint64 // spend and unknownSpend when the balance was seen
	balanceUnk    uint64
	pending       map[string]bool        // jobs seen running: a failure refunds their credits
	statuses      map[string]*statusSeen // by "asset:7" or "encore_creation:7"
}

// statusSeen is when each status of one asset was first seen.
type statusSeen struct {
	firstEnd [3]uint64 // per rank, the end event of the first exchange that showed it; 0: never
	final    string
	finalEnd uint64
}

// New returns a checker of exchanges against a parsed openapi.json.
func New(api *contract.Contract) *Checker {
	return &Checker{api: api, shapes: shapes(api), creds: map[string]*credential{}, groups: map[string]*group{}, stats: map[string]*RuleStats{},
		drift: map[DriftCount]int{}}
}

// Pending is an exchange whose request has started.
type Pending struct {
	begin       uint64
	cred        string // digest, "" without a bearer token
	group       string
	unknown     bool // the credential's workspace was unknown at the start
	spending    bool // the operation debits credits (x-spends-credits)
	newestFirst bool // its pages list ids newest first (x-list-order)
	opID        string
	vars        map[string]string
	findErr     error
	spendAt     uint64 // the group's spend and unknownSpend after this call started
	unknownAt   uint64
	quietStart  bool // no call that could spend was in flight
	allAt       uint64
	allQuiet    bool // no call of any workspace that could spend was in flight
	cleanStart  bool // quiet, and the group's balance was known and nothing spent since
}

// Begin notes that a request starts.
func (k *Checker) Begin(method string, u *url.URL, authorization string) *Pending {
	p := &Pending{}
	if strings.HasPrefix(u.Path, BasePath+"/") {
		r := &http.Request{Method: method, URL: u, Header: http.Header{}, Host: u.Host}
		p.opID, p.vars, p.findErr = k.api.FindOperation(r)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.clock++
	p.begin = k.clock
	if token := Bearer(authorization); token != "" {
		p.cred = Digest(token)
		cr := k.creds[p.cred]
		if cr == nil {
			cr = &credential{}
			k.creds[p.cred] = cr
		}
		p.unknown = !cr.known
		p.group = k.groupKey(p.cred)
	}
	if p.group == "" {
		return p
	}
	g := k.group(p.group)
	op, _ := k.api.Operation(p.opID)
	p.spending, p.newestFirst = op.SpendsCredits, op.NewestFirst
	p.quietStart = g.spendInflight == 0 && k.unknownSpendInflight == 0
	p.cleanStart = p.quietStart && g.balanceKnown && g.balanceSpend == g.spend && g.balanceUnk == k.unknownSpend
	p.allQuiet = k.allSpendInflight == 0
	if p.spending {
		g.spend++
		g.spendInflight++
		k.allSpend++
		k.allSpendInflight++
		if p.unknown {
			k.unknownSpend++
			k.unknownSpendInflight++
		}
	}
	p.spendAt, p.unknownAt, p.allAt = g.spend, k.unknownSpend, k.allSpend
	return p
}

func (k *Checker) groupKey(cred string) string {
	if cr := k.creds[cred]; cr != nil && cr.known {
		return "ws:" + strconv.FormatUint(cr.workspace, 10)
	}
	return "cred:" + cred
}

func (k *Checker) group(key string) *group {
	g := k.groups[key]
	if g == nil {
		g = &group{pending: map[string]bool{}, statuses: map[string]*statusSeen{}}
		k.groups[key] = g
	}
	return g
}

// Abandon ends an exchange that got no response (the upstream could not be
// reached, the client went away): nothing is checked, but a call that
// might have spent is over.
func (k *Checker) Abandon(p *Pending) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.clock++
	if p.group == "" || !p.spending {
		return
	}
	g := k.group(p.group)
	g.spend++
	g.spendInflight--
	k.allSpend++
	k.allSpendInflight--
	if p.unknown {
		k.unknownSpend++
		k.unknownSpendInflight--
	}
}

// Finish checks an exchange whose response is known. The checks that need
// no memory run first, outside the lock; then the rules across exchanges.
func (k *Checker) Finish(p *Pending, x *Exchange) Result {
	c := &verdict{res: Result{Operation: p.opID}, applied: map[string]bool{}}
	if x.BodySkipped != "" {
		c.res.Skipped = append(c.res.Skipped, "request body: "+x.BodySkipped)
	}
	if x.ResponseSkipped != "" {
		c.res.Skipped = append(c.res.Skipped, "response body: "+x.ResponseSkipped)
	}
	inAPI := strings.HasPrefix(x.URL.Path, BasePath+"/")
	var body any
	bodyOK := false
	if x.ResponseSkipped == "" && len(x.ResponseBody) > 0 && IsJSON(x.ResponseHeader) {
		dec := json.NewDecoder(bytes.NewReader(x.ResponseBody))
		dec.UseNumber()
		bodyOK = dec.Decode(&body) == nil
	}
	if inAPI {
		k.checkDocument(c, p, x, body, bodyOK)
		if bodyOK && x.Status == http.StatusOK && p.newestFirst {
			checkList(c, p, x, body)
		}
	}

	k.mu.Lock()
	defer k.mu.Unlock()
	k.clock++
	end := k.clock
	var g *group
	cleanEnd, allClean := false, false
	if p.group != "" {
		g = k.group(p.group)
		wantSpend, wantUnknown, wantAll := p.spendAt, p.unknownAt, p.allAt
		if p.spending {
			g.spend++
			g.spendInflight--
			k.allSpend++
			k.allSpendInflight--
			wantSpend++
			wantAll++
			if p.unknown {
				k.unknownSpend++
				k.unknownSpendInflight--
				wantUnknown++
			}
		}
		cleanEnd = g.spend == wantSpend && k.unknownSpend == wantUnknown
		allClean = p.allQuiet && k.allSpend == wantAll
	}
	if !inAPI {
		return c.res
	}
	// Rate-limit headers: every answer to a known workspace. A 401 knows no
	// workspace (openapi.json: it carries no rate-limit headers), nor does
	// an answer that needs no credential (the document, a path outside
	// every operation) to a credential never accepted by an operation that
	// needs one.
	cr := k.creds[p.cred]
	if cr != nil && x.Status != http.StatusUnauthorized && k.api.Scope(p.opID) != "" {
		cr.accepted = true
	}
	if cr != nil && cr.accepted && x.Status != http.StatusUnauthorized {
		c.apply(RuleRateHeaders)
		rateHeaders(c, x.ResponseHeader)
	}
	if x.Status == http.StatusTooManyRequests {
		c.apply(RuleRetryAfter)
		if v := x.ResponseHeader.Get("Retry-After"); v == "" {
			c.add(RuleRetryAfter, "headers.Retry-After", "a 429 must carry Retry-After")
		} else if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
			c.add(RuleRetryAfter, "headers.Retry-After", "Retry-After %q is not a whole number of seconds", v)
		}
	}
	if g != nil && bodyOK && x.Status < 300 {
		m, _ := body.(map[string]any)
		if p.opID == "getAccount" && x.Status == http.StatusOK {
			if ws, ok := IntOf(m["workspace_id"]); ok && ws >= 0 {
				cr.known, cr.workspace = true, uint64(ws)
			}
			if bal, ok := IntOf(m["credits_balance"]); ok {
				if now := k.groupKey(p.cred); now == p.group {
					k.observeBalance(g, bal, p.quietStart && cleanEnd)
				} else {
					// Just learned whose workspace this is: certain only if
					// nothing of any workspace could spend meanwhile.
					k.observeBalance(k.group(now), bal, allClean)
				}
			}
		}
		if p.spending {
			k.checkCredits(c, p, g, m, cleanEnd)
		}
		k.checkStatuses(c, p, k.group(k.groupKey(p.cred)), body, end)
	}
	for r := range c.applied {
		k.stat(r).Applied++
	}
	for _, v := range c.res.Violations {
		k.stat(v.Rule).Violations++
	}
	for _, d := range c.res.Drift {
		k.drift[DriftCount{Kind: d.Kind, Operation: p.opID, Path: anyIndex(d.Path), Source: d.Source}]++
	}
	return c.res
}

// verdict collects what one exchange breaks and which rules applied to it.
type verdict struct {
	res     Result
	applied map[string]bool
}

// add notes a violation of a rule, labelled as the rule is.
func (c *verdict) add(rule, path, format string, args ...any) {
	c.addFrom(rule, ruleSource[rule], path, format, args...)
}

// addFrom notes a violation labelled by where it is.
func (c *verdict) addFrom(rule string, src Source, path, format string, args ...any) {
	c.res.Violations = append(c.res.Violations, Violation{Rule: rule, Path: path, Message: fmt.Sprintf(format, args...), Source: src})
}

// drift notes something the document does not declare.
func (c *verdict) drift(kind, path string, src Source, format string, args ...any) {
	c.res.Drift = append(c.res.Drift, Drift{Kind: kind, Path: path, Message: fmt.Sprintf(format, args...), Source: src})
}

func (c *verdict) apply(rules ...string) {
	for _, r := range rules {
		c.applied[r] = true
	}
}

func (c *verdict) skip(why string) { c.res.Skipped = append(c.res.Skipped, why) }

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

// rateHeaders checks the three rate-limit headers.
func rateHeaders(c *verdict, h http.Header) {
	values := map[string]int64{}
	for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		v := h.Get(name)
		if exact := h[name]; len(exact) > 0 { // spelled as the spec writes it, not canonical
			v = exact[0]
		}
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case v == "":
			c.add(RuleRateHeaders, "headers."+name, "every response carries %s", name)
		case err != nil || n < 0:
			c.add(RuleRateHeaders, "headers."+name, "%s %q is not a non-negative integer", name, v)
		default:
			values[name] = n
		}
	}
	limit, okL := values["X-RateLimit-Limit"]
	left, okR := values["X-RateLimit-Remaining"]
	if okL && okR && left > limit {
		c.add(RuleRateHeaders, "headers.X-RateLimit-Remaining", "%d requests left is above the limit of %d", left, limit)
	}
}

// checkList holds a page to newest first and to its cursor.
func checkList(c *verdict, p *Pending, x *Exchange, body any) {
	m, _ := body.(map[string]any)
	data, ok := m["data"].([]any)
	if !ok {
		return
	}
	c.apply(RuleListOrder, RuleListCursor)
	src := ruleSource[RuleListOrder]
	if d := listOrderDecision[p.opID]; d != "" {
		src = decision(d)
	}
	cursor, hasCursor := int64(0), false
	if v := x.URL.Query().Get("starting_after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		cursor, hasCursor = n, err == nil
	}
	var prev int64
	for i, item := range data {
		obj, _ := item.(map[string]any)
		id, ok := IntOf(obj["id"])
		if !ok {
			continue
		}
		path := fmt.Sprintf("$.data[%d].id", i)
		if i > 0 && id >= prev {
			c.addFrom(RuleListOrder, src, path, "id %d follows id %d: the list is not newest first", id, prev)
		}
		if hasCursor && id >= cursor {
			c.add(RuleListCursor, path, "id %d is on the page after starting_after=%d", id, cursor)
		}
		prev = id
	}
	if more, _ := m["has_more"].(bool); more {
		if _, ok := m["next_cursor"]; !ok {
			c.add(RuleListCursor, "$.next_cursor", "has_more is true but there is no next_cursor")
		}
	}
}

// observeBalance notes a balance the workspace had, if nothing could have
// spent while it was read.
func (k *Checker) observeBalance(g *group, balance int64, clean bool) {
	if !clean {
		g.balanceKnown = false
		return
	}
	g.balance, g.balanceKnown, g.balanceSpend, g.balanceUnk = balance, true, g.spend, k.unknownSpend
}

// checkCredits holds a creation's charge and balance to the balance known
// just before it. Only when certain: the balance was read with nothing that
// could spend in flight, nothing could spend between that read and this
// call's end, and a higher balance than expected is let pass while a job
// the checker saw running could have failed and been refunded.
func (k *Checker) checkCredits(c *verdict, p *Pending, g *group, m map[string]any, cleanEnd bool) {
	charged, ok1 := IntOf(m["credits_charged"])
	balance, ok2 := IntOf(m["credits_balance"])
	if !ok1 || !ok2 {
		return
	}
	if gift, _ := m["covered_by_monthly_gift"].(bool); gift {
		c.apply(RuleGift)
		if charged != 0 {
			c.add(RuleGift, "$.credits_charged", "covered_by_monthly_gift is true, so credits_charged must be 0, not %d", charged)
		}
	}
	if p.cleanStart && cleanEnd {
		c.apply(RuleBalance)
		want := g.balance - charged
		refundable := len(g.pending) > 0 || k.unknownPending()
		if balance < want || (balance > want && !refundable) {
			c.add(RuleBalance, "$.credits_balance", "the balance was %d and %d credits were charged, so credits_balance should be %d, not %d (no other call of the workspace could spend in between)",
				g.balance, charged, want, balance)
		}
	}
	k.observeBalance(g, balance, p.quietStart && cleanEnd)
}

// unknownPending reports whether a credential of an unknown workspace has a
// job running: it may be of any workspace, and refunded.
func (k *Checker) unknownPending() bool {
	for key, g := range k.groups {
		if strings.HasPrefix(key, "cred:") && len(g.pending) > 0 {
			return true
		}
	}
	return false
}

var statusRank = map[string]int{"queued": 0, "processing": 1, "completed": 2, "failed": 2}

// checkStatuses holds every asset and Encore creation in a body to the
// statuses shown for it by exchanges that ended before this one began.
func (k *Checker) checkStatuses(c *verdict, p *Pending, g *group, body any, end uint64) {
	walkStatuses(body, "$", func(key, status, path string) {
		rank, ok := statusRank[status]
		if !ok {
			return
		}
		c.apply(RuleStatusOrder)
		st := g.statuses[key]
		if st == nil {
			st = &statusSeen{}
			g.statuses[key] = st
		}
		name := strings.Replace(key, ":", " ", 1)
		for r := 2; r > rank; r-- {
			if st.firstEnd[r] != 0 && st.firstEnd[r] < p.begin {
				was := map[int]string{1: "processing", 2: st.final}[r]
				c.add(RuleStatusOrder, path, "%s was %s in an earlier answer; now it is %s: a status never moves back", name, was, status)
				break
			}
		}
		if rank == 2 && st.final != "" && st.final != status && st.finalEnd < p.begin {
			c.add(RuleStatusOrder, path, "%s was %s in an earlier answer; now it is %s: a final status never changes", name, st.final, status)
		}
		if st.firstEnd[rank] == 0 {
			st.firstEnd[rank] = end
		}
		if rank == 2 {
			if st.final == "" {
				st.final, st.finalEnd = status, end
			}
			delete(g.pending, key)
		} else {
			g.pending[key] = true
		}
	})
}

// walkStatuses calls fn for every asset and Encore creation in a body, in
// a fixed order.
func walkStatuses(v any, path string, fn func(key, status, path string)) {
	switch t := v.(type) {
	case map[string]any:
		obj, _ := t["object"].(string)
		status, isString := t["status"].(string)
		if id, ok := IntOf(t["id"]); ok && isString && (obj == "asset" || obj == "encore_creation") {
			fn(obj+":"+strconv.FormatInt(id, 10), status, path+".status")
		}
		var keys []string // of the values that may hold more
		for key, v := range t {
			switch v.(type) {
			case map[string]any, []any:
				keys = append(keys, key)
			}
		}
		sort.Strings(keys)
		for _, key := range keys {
			walkStatuses(t[key], path+"."+key, fn)
		}
	case []any:
		for i, item := range t {
			walkStatuses(item, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
}

// IntOf reads a JSON number (decoded with UseNumber) as an integer.
func IntOf(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// IsJSON reports whether a response declares a JSON body.
func IsJSON(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

func (k *Checker) stat(rule string) *RuleStats {
	s := k.stats[rule]
	if s == nil {
		s = &RuleStats{}
		k.stats[rule] = s
	}
	return s
}

// Stats is, per rule, how many exchanges it applied to and how many
// violations it found.
func (k *Checker) Stats() map[string]RuleStats {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[string]RuleStats, len(k.stats))
	for r, s := range k.stats {
		out[r] = *s
	}
	return out
}
