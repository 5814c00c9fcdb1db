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
//
// check.go follows an exchange from Begin to Finish; each family of rules
// has its file: document.go (openapi.json and the error object),
// ratelimit.go, credits.go, statuses.go, lists.go, drift.go (what the
// document does not declare), rules.go (the rules and whose they are),
// mask.go (secrets).
package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/mediamock/mediamock/internal/contract"
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
		retryAfter(c, x.ResponseHeader)
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
