// Package proxy is a validating reverse proxy in front of any server of the
// service's API (the real service, a staging deployment, this mock): every
// exchange passes through unchanged, and is checked against openapi.json and
// against the rules of the specification a document cannot express. What
// breaks a rule goes to a report, one JSON line an exchange; bearer tokens
// never do.
package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/internal/wire"
	"github.com/mediamock/mediamock/sim"
)

// Options configures a Proxy.
type Options struct {
	// Upstream is the server's root address (its base path included only
	// if the client's paths lack it).
	Upstream *url.URL
	// Contract is openapi.json.
	Contract *contract.Contract
	// Report receives one JSON line per exchange with violations; nil
	// keeps only the summary.
	Report io.Writer
	// Log receives the proxy's own problems; nil discards them.
	Log *slog.Logger
	// MaxBody is how much of a JSON body is kept to check it; a larger one
	// passes unchecked (the report says so). 0 means 8 MiB.
	MaxBody int64
	// Transport reaches the upstream; nil uses one with the system's roots
	// and timeouts longer than the longest long poll.
	Transport http.RoundTripper
}

// Violation is one broken rule of an exchange.
type Violation struct {
	Rule    string `json:"rule"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// Exchange is a report line: an exchange that broke rules.
type Exchange struct {
	Time       string      `json:"time"`
	Method     string      `json:"method"`
	Path       string      `json:"path"`
	Status     int         `json:"status"`
	Violations []Violation `json:"violations"`
}

// Proxy is a validating reverse proxy.
type Proxy struct {
	o  Options
	rp *httputil.ReverseProxy

	mu        sync.Mutex
	exchanges int
	withRules int
	rules     map[string]int
	statuses  map[string]string // asset id -> last status seen
	balances  map[string]int64  // credential (hashed) -> last balance seen
	inflight  map[string]int    // credential (hashed) -> requests in flight
}

// New returns a proxy.
func New(o Options) *Proxy {
	if o.MaxBody <= 0 {
		o.MaxBody = 8 << 20
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Transport == nil {
		o.Transport = &http.Transport{
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 90 * time.Second, // above the longest wait_seconds (55)
			MaxIdleConnsPerHost:   64,
		}
	}
	p := &Proxy{o: o, rules: map[string]int{}, statuses: map[string]string{}, balances: map[string]int64{}, inflight: map[string]int{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(o.Upstream)
			pr.Out.Host = o.Upstream.Host
		},
		Transport:     o.Transport,
		FlushInterval: -1, // streams and long polls pass as they come
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			o.Log.Warn("upstream unreachable", "upstream", o.Upstream.Redacted(), "err", err)
			body, _ := json.Marshal(wire.ErrorBody{Error: wire.ErrorObject{Code: "upstream_unreachable",
				Message: fmt.Sprintf("The proxy cannot reach %s: %v.", o.Upstream.Redacted(), err)}})
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			w.Write(append(body, '\n'))
		},
	}
	return p
}

// ServeHTTP proxies one exchange and checks it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_mock/proxy/report" && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(p.Summary())
		return
	}
	who := credential(r.Header.Get("Authorization"))
	var reqViolations []Violation
	if op, vars, ok := p.o.Contract.Operation(r); ok {
		reqViolations = p.checkRequest(r, op, vars)
	}
	p.mu.Lock()
	p.inflight[who]++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.inflight[who]--
		p.mu.Unlock()
	}()
	rec := &checker{p: p, r: r, who: who, before: reqViolations}
	rp := *p.rp
	rp.ModifyResponse = rec.check
	rp.ServeHTTP(w, r)
}

// checkRequest validates the request against its operation, reading (and
// putting back) a body of at most MaxBody bytes.
func (p *Proxy) checkRequest(r *http.Request, op string, vars map[string]string) []Violation {
	if r.Body != nil && r.Body != http.NoBody {
		data, err := io.ReadAll(io.LimitReader(r.Body, p.o.MaxBody+1))
		rest := r.Body
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), rest), rest}
		if err != nil || int64(len(data)) > p.o.MaxBody {
			return []Violation{{Rule: "skipped", Message: "the request body is too large to check"}}
		}
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
		vr := r.Clone(r.Context())
		vr.Body, _ = r.GetBody()
		return fromContract("request", p.o.Contract.ValidateRequest(vr, op, vars, r.URL.Query()))
	}
	return fromContract("request", p.o.Contract.ValidateRequest(r, op, vars, r.URL.Query()))
}

func fromContract(rule string, err error) []Violation {
	if err == nil {
		return nil
	}
	var out []Violation
	if e := sim.AsError(err); e.Kind != sim.EINTERNAL {
		if list, ok := e.Details["violations"].([]sim.Violation); ok {
			for _, v := range list {
				out = append(out, Violation{Rule: rule, Path: v.Field, Message: v.Reason})
			}
			return out
		}
		return []Violation{{Rule: rule, Message: e.Message}}
	}
	for _, v := range contract.Violations(err, "body") {
		out = append(out, Violation{Rule: rule, Path: v.Field, Message: v.Reason})
	}
	if len(out) == 0 {
		out = append(out, Violation{Rule: rule, Message: err.Error()})
	}
	return out
}

// credential names an Authorization value without keeping it: a hash.
func credential(authorization string) string {
	if authorization == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(authorization))
	return fmt.Sprintf("%x", sum[:8])
}

// checker checks one response.
type checker struct {
	p      *Proxy
	r      *http.Request
	who    string
	before []Violation
}

func (c *checker) check(resp *http.Response) error {
	vs := append([]Violation{}, c.before...)
	vs = append(vs, c.headers(resp)...)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "application/json" && strings.HasPrefix(c.r.URL.Path, "/api/v1/") {
		data, err := io.ReadAll(io.LimitReader(resp.Body, c.p.o.MaxBody+1))
		rest := resp.Body
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), rest), rest}
		if err == nil && int64(len(data)) <= c.p.o.MaxBody {
			vs = append(vs, c.body(resp, data)...)
		} else {
			vs = append(vs, Violation{Rule: "skipped", Message: "the response body is too large to check"})
		}
	}
	c.p.record(c.r, resp, vs)
	if n := countRules(vs); n > 0 {
		resp.Header.Set("X-Mediamock-Violations", fmt.Sprintf("%d; rules=%s", n, strings.Join(ruleNames(vs), ",")))
	}
	return nil
}

// headers checks what every response must carry.
func (c *checker) headers(resp *http.Response) []Violation {
	if !strings.HasPrefix(c.r.URL.Path, "/api/v1/") {
		return nil
	}
	var vs []Violation
	if c.r.Header.Get("Authorization") != "" && resp.StatusCode != http.StatusUnauthorized {
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
			if _, err := strconv.ParseInt(resp.Header.Get(h), 10, 64); err != nil {
				vs = append(vs, Violation{Rule: "rate-limit-headers", Path: h, Message: "every response carries " + h + " (an integer)"})
			}
		}
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n < 0 {
			vs = append(vs, Violation{Rule: "retry-after", Path: "Retry-After", Message: "a 429 carries Retry-After in seconds"})
		}
	}
	return vs
}

// body checks the response body: the document, then the behaviour.
func (c *checker) body(resp *http.Response, data []byte) []Violation {
	var vs []Violation
	if err := c.p.o.Contract.CheckExchange(c.r, resp.StatusCode, resp.Header, data); err != nil && err != contract.ErrNoOperation {
		vs = append(vs, fromContract("openapi", err)...)
	}
	var v map[string]any
	if json.Unmarshal(data, &v) != nil {
		return vs
	}
	if resp.StatusCode >= 400 {
		e, _ := v["error"].(map[string]any)
		code, _ := e["code"].(string)
		msg, _ := e["message"].(string)
		if code == "" || msg == "" {
			vs = append(vs, Violation{Rule: "error-object", Path: "error", Message: "an error carries {error: {code, message}}"})
		}
		return vs
	}
	vs = append(vs, c.p.statusesForward(v)...)
	vs = append(vs, c.p.newestFirst(c.r, v)...)
	vs = append(vs, c.p.balance(c.r, c.who, resp.StatusCode, v)...)
	return vs
}

var rank = map[string]int{"queued": 0, "processing": 1, "completed": 2, "failed": 2}

// statusesForward checks that no asset's status moves back.
func (p *Proxy) statusesForward(v map[string]any) []Violation {
	var vs []Violation
	var walk func(path string, x any)
	walk = func(path string, x any) {
		switch t := x.(type) {
		case map[string]any:
			id, idOK := t["id"].(float64)
			status, stOK := t["status"].(string)
			if obj, _ := t["object"].(string); obj == "asset" && idOK && stOK {
				key := strconv.FormatFloat(id, 'f', 0, 64)
				p.mu.Lock()
				prev, seen := p.statuses[key]
				if r, ok := rank[status]; ok && (!seen || rank[prev] <= r) {
					if seen && rank[prev] == 2 && prev != status {
						vs = append(vs, Violation{Rule: "status-forward", Path: path + ".status", Message: fmt.Sprintf("asset %s ended %s, then showed %s", key, prev, status)})
					} else {
						p.statuses[key] = status
					}
				} else if seen {
					vs = append(vs, Violation{Rule: "status-forward", Path: path + ".status", Message: fmt.Sprintf("asset %s went back from %s to %s", key, prev, status)})
				}
				p.mu.Unlock()
			}
			for k, e := range t {
				walk(join(path, k), e)
			}
		case []any:
			for i, e := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	walk("", v)
	return vs
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// newestFirst checks the order of list pages.
func (p *Proxy) newestFirst(r *http.Request, v map[string]any) []Violation {
	if r.Method != http.MethodGet || !slices.Contains([]string{"/api/v1/assets", "/api/v1/social/publications", "/api/v1/projects", "/api/v1/brand_kits"}, r.URL.Path) {
		return nil
	}
	data, _ := v["data"].([]any)
	last := -1.0
	for i, x := range data {
		item, _ := x.(map[string]any)
		id, ok := item["id"].(float64)
		if !ok {
			continue
		}
		if last >= 0 && id >= last {
			return []Violation{{Rule: "newest-first", Path: fmt.Sprintf("data[%d].id", i), Message: fmt.Sprintf("a list is newest first: id %v after %v", id, last)}}
		}
		last = id
	}
	return nil
}

// balance checks credits_balance against credits_charged across the calls
// of one credential, when no other call of it was in flight.
func (p *Proxy) balance(r *http.Request, who string, status int, v map[string]any) []Violation {
	bal, ok := v["credits_balance"].(float64)
	if !ok || who == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	prev, known := p.balances[who]
	alone := p.inflight[who] == 1
	p.balances[who] = int64(bal)
	charged, isCreate := v["credits_charged"].(float64)
	if !isCreate || !known || !alone || r.Method != http.MethodPost || status != http.StatusCreated {
		return nil
	}
	if want := prev - int64(charged); int64(bal) != want {
		return []Violation{{Rule: "credits-balance", Path: "credits_balance", Message: fmt.Sprintf("balance %d - charged %d should be %d, got %d", prev, int64(charged), want, int64(bal))}}
	}
	return nil
}

// record counts an exchange and reports it when it broke rules.
func (p *Proxy) record(r *http.Request, resp *http.Response, vs []Violation) {
	p.mu.Lock()
	p.exchanges++
	broke := countRules(vs) > 0
	if broke {
		p.withRules++
	}
	for _, v := range vs {
		p.rules[v.Rule]++
	}
	p.mu.Unlock()
	if len(vs) == 0 || p.o.Report == nil {
		return
	}
	line, _ := json.Marshal(Exchange{Time: time.Now().UTC().Format(time.RFC3339), Method: r.Method, Path: r.URL.Path, Status: resp.StatusCode, Violations: vs})
	p.mu.Lock()
	p.o.Report.Write(append(line, '\n'))
	p.mu.Unlock()
}

func countRules(vs []Violation) int {
	n := 0
	for _, v := range vs {
		if v.Rule != "skipped" {
			n++
		}
	}
	return n
}

func ruleNames(vs []Violation) []string {
	var out []string
	for _, v := range vs {
		if v.Rule != "skipped" && !slices.Contains(out, v.Rule) {
			out = append(out, v.Rule)
		}
	}
	return out
}

// Summary is the report's totals.
type Summary struct {
	Exchanges      int            `json:"exchanges"`
	WithViolations int            `json:"exchanges_with_violations"`
	Rules          map[string]int `json:"violations_by_rule"`
}

// Summary returns the totals so far.
func (p *Proxy) Summary() Summary {
	p.mu.Lock()
	defer p.mu.Unlock()
	rules := make(map[string]int, len(p.rules))
	for k, v := range p.rules {
		rules[k] = v
	}
	return Summary{Exchanges: p.exchanges, WithViolations: p.withRules, Rules: rules}
}

// WriteSummary prints the totals as a table.
func (p *Proxy) WriteSummary(w io.Writer) {
	s := p.Summary()
	fmt.Fprintf(w, "%d exchanges, %d with violations\n", s.Exchanges, s.WithViolations)
	names := make([]string, 0, len(s.Rules))
	for k := range s.Rules {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(w, "  %-20s %d\n", k, s.Rules[k])
	}
}
