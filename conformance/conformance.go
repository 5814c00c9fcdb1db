// Package conformance checks any server of the API from the outside: the
// real service, a staging build, this mock. It needs a base URL and one
// key per scope, reads what a real workspace allows, sends bad inputs, and
// creates a generation only when spending credits is allowed. Every
// exchange is held to openapi.json and to the rules of the specification
// (the checker of internal/proxy). At the end it lists which rules were
// checked and which were skipped, and why.
//
//	MEDIAMOCK_CONFORMANCE_URL=https://api.example.com/api/v1 \
//	MEDIAMOCK_KEY_READ=... MEDIAMOCK_KEY_GENERATE=... MEDIAMOCK_KEY_PUBLISH=... \
//	go test ./conformance/ -run TestConformance -v
//
// From Go, against a server started in-process:
//
//	conformance.Run(t, conformance.Config{BaseURL: srv.BaseURL(), Keys: conformance.Keys{Read: "mk_test_read_only", ...}})
package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/spec"
)

// The environment of a run against a running server.
const (
	EnvURL          = "MEDIAMOCK_CONFORMANCE_URL"    // base URL, including /api/v1
	EnvKeyRead      = "MEDIAMOCK_KEY_READ"           // a key with the read scope only
	EnvKeyGenerate  = "MEDIAMOCK_KEY_GENERATE"       // a key with the generate scope only
	EnvKeyPublish   = "MEDIAMOCK_KEY_PUBLISH"        // a key with the publish scope only
	EnvKeyAll       = "MEDIAMOCK_KEY_ALL"            // optional: a key with every scope
	EnvSpendCredits = "MEDIAMOCK_SPEND_CREDITS"      // 1: create a generation with the cheapest model
	EnvReport       = "MEDIAMOCK_CONFORMANCE_REPORT" // optional: write the rule table to this file
)

// Keys are the credentials of one workspace, one per scope. Any may be
// empty: the checks that need it are skipped.
type Keys struct {
	Read, Generate, Publish, All string
}

// Config is what a run needs.
type Config struct {
	// BaseURL is the service's {base_url}, ending in /api/v1.
	BaseURL string
	Keys    Keys
	// SpendCredits allows creating one generation with the cheapest model
	// of GET /models.
	SpendCredits bool
	// Client makes the requests; nil is a client with the proxy's timeouts.
	Client *http.Client
	// Wait waits out a 429's Retry-After; nil waits on the wall clock. A
	// test against an in-process mock passes one that moves its simulated
	// clock instead.
	Wait func(ctx context.Context, d time.Duration) error
	// ReportPath, when set, receives the rule table.
	ReportPath string
}

// FromEnv reads a configuration from the environment; ok is false when
// MEDIAMOCK_CONFORMANCE_URL is unset.
func FromEnv(getenv func(string) string) (cfg Config, ok bool) {
	cfg = Config{
		BaseURL:      strings.TrimSpace(getenv(EnvURL)),
		Keys:         Keys{Read: getenv(EnvKeyRead), Generate: getenv(EnvKeyGenerate), Publish: getenv(EnvKeyPublish), All: getenv(EnvKeyAll)},
		SpendCredits: getenv(EnvSpendCredits) == "1",
		ReportPath:   getenv(EnvReport),
	}
	return cfg, cfg.BaseURL != ""
}

// Outcome is what became of one rule or check.
type Outcome struct {
	Rule   string `json:"rule"`
	Status string `json:"status"` // passed, failed or skipped
	Detail string `json:"detail"`
}

// Report is the outcome of every rule and check of a run.
type Report struct {
	Outcomes []Outcome `json:"outcomes"`
}

// Failed counts the failed outcomes.
func (r *Report) Failed() int {
	n := 0
	for _, o := range r.Outcomes {
		if o.Status == "failed" {
			n++
		}
	}
	return n
}

// Table renders the report as a text table.
func (r *Report) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-30s %-8s %s\n", "rule", "status", "detail")
	for _, o := range r.Outcomes {
		fmt.Fprintf(&b, "%-30s %-8s %s\n", o.Rule, o.Status, o.Detail)
	}
	return b.String()
}

var checkerContract = sync.OnceValues(func() (*contract.Contract, error) {
	return contract.Parse("openapi.json", spec.OpenAPI)
})

// suite is one run.
type suite struct {
	cfg     Config
	base    string // BaseURL without a trailing slash
	prefix  string // its path, like /api/v1
	client  *http.Client
	checker *check.Checker

	mu       sync.Mutex
	outcomes map[string]*Outcome
	order    []string
	failed   map[string]bool // checker rules with violations

	models []model // from GET /models
}

type model struct {
	ID                     string `json:"id"`
	Modality               string `json:"modality"`
	Track                  string `json:"track"`
	CreditsPerOutput       int64  `json:"credits_per_output"`
	RequiresReferenceImage bool   `json:"requires_reference_image"`
}

// Run runs every check the configuration allows, each as a subtest, and
// logs the table of rules checked and skipped (and writes it to
// cfg.ReportPath when set).
func Run(t *testing.T, cfg Config) *Report {
	t.Helper()
	api, err := checkerContract()
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	s := &suite{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/"), client: cfg.Client, checker: check.New(api),
		outcomes: map[string]*Outcome{}, failed: map[string]bool{}}
	if s.client == nil {
		s.client = &http.Client{Transport: check.NewTransport(check.Timeouts{})}
	}
	u, err := url.Parse(s.base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.HasSuffix(u.Path, check.BasePath) {
		t.Fatalf("%s=%q: want the base URL including %s, like https://api.example.com/api/v1", EnvURL, cfg.BaseURL, check.BasePath)
	}
	s.prefix = u.Path
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { s.run(t, c) })
	}
	rep := s.report()
	t.Logf("conformance of %s:\n%s", s.base, rep.Table())
	if cfg.ReportPath != "" {
		if err := os.WriteFile(cfg.ReportPath, []byte(rep.Table()), 0o644); err != nil {
			t.Errorf("write the report: %v", err)
		}
	}
	return rep
}

// scenario is one check of the suite; its name is also its rule id in the table.
type scenario struct {
	name, summary string
	fn            func(c *ctx)
}

// ctx is one check running.
type ctx struct {
	t      *testing.T
	s      *suite
	detail string
}

func (s *suite) run(t *testing.T, c scenario) {
	x := &ctx{t: t, s: s}
	defer func() {
		switch {
		case t.Failed():
			s.outcome(c.name, "failed", "see the test log: "+c.summary)
		case t.Skipped():
		default:
			detail := c.summary
			if x.detail != "" {
				detail += "; " + x.detail
			}
			s.outcome(c.name, "passed", detail)
		}
	}()
	c.fn(x)
}

func (s *suite) outcome(rule, status, detail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.outcomes[rule]; !ok {
		s.order = append(s.order, rule)
	}
	s.outcomes[rule] = &Outcome{Rule: rule, Status: status, Detail: detail}
}

// skip ends a check, saying why in the table.
func (c *ctx) skip(format string, args ...any) {
	c.t.Helper()
	why := fmt.Sprintf(format, args...)
	c.s.outcome(c.t.Name()[strings.LastIndex(c.t.Name(), "/")+1:], "skipped", why)
	c.t.Skip(why)
}

func (c *ctx) note(format string, args ...any) {
	if c.detail != "" {
		c.detail += "; "
	}
	c.detail += fmt.Sprintf(format, args...)
}

// skipReasons say why a rule of the checker may not apply in a run.
var skipReasons = map[string]string{
	check.RuleRequest:     "no request that breaks openapi.json was answered below 400",
	check.RuleOperation:   "no request outside every operation was made",
	check.RuleRetryAfter:  "no 429 was met: provoking one would use up the workspace's rate limit",
	check.RuleBalance:     "needs " + EnvSpendCredits + "=1 and a key that both reads the account and generates (" + EnvKeyAll + ")",
	check.RuleGift:        "no creation was covered by a monthly gift",
	check.RuleStatusOrder: "no asset with a status was seen",
	check.RuleListOrder:   "no list page was read",
	check.RuleListCursor:  "no list page was read",
}

func (s *suite) report() *Report {
	stats := s.checker.Stats()
	rep := &Report{}
	for _, r := range check.Rules {
		st := stats[r.ID]
		o := Outcome{Rule: r.ID}
		switch {
		case st.Violations > 0:
			o.Status, o.Detail = "failed", fmt.Sprintf("%d violations in %d exchanges: %s", st.Violations, st.Applied, r.Summary)
		case st.Applied > 0:
			o.Status, o.Detail = "passed", fmt.Sprintf("held on %d exchanges: %s", st.Applied, r.Summary)
		default:
			o.Status, o.Detail = "skipped", skipReasons[r.ID]
			if o.Detail == "" {
				o.Detail = "no exchange it applies to"
			}
		}
		rep.Outcomes = append(rep.Outcomes, o)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range s.order {
		rep.Outcomes = append(rep.Outcomes, *s.outcomes[name])
	}
	return rep
}

// result is one checked response.
type result struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the check if it cannot.
func (c *ctx) decode(r *result, v any) {
	c.t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		c.t.Fatalf("decode the body (%d): %v: %s", r.Status, err, truncate(r.Body))
	}
}

// call makes one request (path relative to the base URL), waits out a 429
// and tries again (at most three times), and holds every exchange to the
// checker.
func (c *ctx) call(method, path, token string, body any) *result {
	c.t.Helper()
	return c.callRaw(method, path, "Bearer "+token, body, token == "")
}

func (c *ctx) callRaw(method, path, authorization string, body any, noAuth bool) *result {
	c.t.Helper()
	var data []byte
	contentType := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		data, contentType = b, "application/json"
	default:
		var err error
		if data, err = json.Marshal(b); err != nil {
			c.t.Fatal(err)
		}
		contentType = "application/json"
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(c.t.Context(), method, c.s.base+path, bytes.NewReader(data))
		if err != nil {
			c.t.Fatal(err)
		}
		if data == nil {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if !noAuth {
			req.Header.Set("Authorization", authorization)
		}
		// The checker sees the path from /api/v1, wherever the base URL puts it.
		checkURL := &url.URL{Path: check.BasePath + strings.TrimPrefix(req.URL.Path, c.s.prefix), RawQuery: req.URL.RawQuery}
		p := c.s.checker.Begin(method, checkURL, req.Header.Get("Authorization"))
		resp, err := c.s.client.Do(req)
		if err != nil {
			c.s.checker.Abandon(p)
			c.t.Fatalf("%s %s: %v", method, path, cleanErr(err))
		}
		rb, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		if err != nil {
			c.s.checker.Abandon(p)
			c.t.Fatalf("%s %s: read the body: %v", method, path, err)
		}
		res := c.s.checker.Finish(p, &check.Exchange{Method: method, URL: checkURL, Header: req.Header, Body: data,
			Status: resp.StatusCode, ResponseHeader: resp.Header, ResponseBody: rb})
		for _, v := range res.Violations {
			c.t.Errorf("%s %s (%s) -> %d: %s at %s: %s", method, path, check.Mask(authorization), resp.StatusCode, v.Rule, v.Path, v.Message)
		}
		r := &result{Status: resp.StatusCode, Header: resp.Header, Body: rb}
		if r.Status != http.StatusTooManyRequests || attempt == 3 {
			return r
		}
		secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || secs < 0 {
			secs = 60
		}
		c.t.Logf("%s %s: 429, waiting %d s as Retry-After says", method, path, secs)
		if err := c.s.wait(c.t.Context(), time.Duration(secs)*time.Second+time.Second); err != nil {
			c.t.Fatal(err)
		}
	}
}

func (s *suite) wait(ctx context.Context, d time.Duration) error {
	if s.cfg.Wait != nil {
		return s.cfg.Wait(ctx, d)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cleanErr drops the address from a client error.
func cleanErr(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// expect fails the check unless the status is one of want.
func (c *ctx) expect(r *result, what string, want ...int) bool {
	c.t.Helper()
	if !slices.Contains(want, r.Status) {
		c.t.Errorf("%s: got %d, want %v: %s", what, r.Status, want, truncate(r.Body))
		return false
	}
	return true
}

func truncate(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}

// keys by purpose.
func (s *suite) readKey() string     { return first(s.cfg.Keys.Read, s.cfg.Keys.All) }
func (s *suite) generateKey() string { return first(s.cfg.Keys.Generate, s.cfg.Keys.All) }
func (s *suite) spendKey() string    { return first(s.cfg.Keys.All, s.cfg.Keys.Generate) }

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// scopes reads the scopes of a key from GET /account: nil and the status
// when the key cannot read the account.
func (c *ctx) scopes(token string) ([]string, int) {
	c.t.Helper()
	r := c.call(http.MethodGet, "/account", token, nil)
	if r.Status != http.StatusOK {
		return nil, r.Status
	}
	var a struct {
		Scopes []string `json:"scopes"`
	}
	c.decode(r, &a)
	return a.Scopes, r.Status
}

// cheapest is the model a creation uses: the lowest credits_per_output
// among models that need no reference image, images first on a tie.
func (c *ctx) cheapest() (model, bool) {
	c.t.Helper()
	if c.s.models == nil {
		key := c.s.readKey()
		if key == "" {
			return model{}, false
		}
		r := c.call(http.MethodGet, "/models", key, nil)
		if r.Status != http.StatusOK {
			return model{}, false
		}
		var cat struct {
			Modalities map[string][]model `json:"modalities"`
		}
		c.decode(r, &cat)
		c.s.models = []model{}
		for _, ms := range cat.Modalities {
			c.s.models = append(c.s.models, ms...)
		}
		sort.Slice(c.s.models, func(i, j int) bool {
			a, b := c.s.models[i], c.s.models[j]
			if a.CreditsPerOutput != b.CreditsPerOutput {
				return a.CreditsPerOutput < b.CreditsPerOutput
			}
			if (a.Modality == "image") != (b.Modality == "image") {
				return a.Modality == "image"
			}
			return a.ID < b.ID
		})
	}
	for _, m := range c.s.models {
		if !m.RequiresReferenceImage {
			return m, true
		}
	}
	return model{}, false
}
