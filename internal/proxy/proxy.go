// Package proxy checks a running service of the API from the outside: a
// reverse proxy in front of any server of the API (the real service, this
// mock, a staging build) that passes traffic through unchanged and holds
// every exchange to openapi.json and to the rules of the specification a
// document cannot express.
//
//	p, err := proxy.New(proxy.Options{Upstream: "https://api.example.com/api/v1", Document: openapiJSON, Report: os.Stderr})
//	http.ListenAndServe("127.0.0.1:8081", p) // clients use http://127.0.0.1:8081/api/v1
//	p.WriteSummary(os.Stderr)
//
// The proxy adds one response header, X-Mediamock-Violations, to an
// exchange that breaks a rule, and serves its summary at
// GET /_mock/proxy/report. Tokens are never written anywhere: a credential
// is known by a digest and shown masked.
//
// proxy.go forwards and checks an exchange; bodies.go keeps the bodies it
// checks, lines.go writes the report's lines, summary.go counts what it saw
// and serves it; record.go and timing.go make a recording of the upstream;
// scrub.go keeps tokens out of its log lines.
package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/contract"
)

// DefaultMaxValidateBytes is the default of Options.MaxValidateBytes.
const DefaultMaxValidateBytes = 2 << 20

// ReportPath is where the proxy serves its summary, on its own listener.
const ReportPath = "/_mock/proxy/report"

// ViolationsHeader is the header the proxy adds to a response that breaks
// a rule: how many violations, and of which rules.
const ViolationsHeader = "X-Mediamock-Violations"

// DriftHeader is the header the proxy adds to a response that carries
// what openapi.json does not declare: how much drift, and of which kinds.
const DriftHeader = "X-Mediamock-Drift"

// Options configures a Proxy.
type Options struct {
	// Upstream is the service's base URL, {base_url} (ending in /api/v1),
	// or its root. The proxy serves the API at /api/v1 and forwards every
	// path below the upstream's root.
	Upstream string
	// Document is openapi.json; Contract, when set, is it parsed already.
	Document []byte
	Contract *contract.Contract
	// MaxValidateBytes caps the bytes of one body kept for validation; a
	// larger body passes through unchecked and the report says so. 0 means
	// 2 MiB.
	MaxValidateBytes int64
	// Report receives one JSON line per exchange that breaks a rule or
	// could not be fully checked; nil writes none.
	Report io.Writer
	// RecordDir, when set, receives fixture.json at Close: the recorded
	// account, models and completed assets as a fixture the mock loads;
	// and timing.json: how long each job created through the proxy queued
	// and processed (Timings).
	RecordDir string
	// Logger receives the proxy's log lines; nil discards them.
	Logger *slog.Logger
	// Transport reaches the upstream; nil is check.NewTransport(check.Timeouts{}).
	Transport http.RoundTripper
	// Now reads the clock for report lines and for the timing of the jobs
	// a recording measures; nil is time.Now.
	Now func() time.Time
}

// Proxy is a validating reverse proxy. It is an http.Handler.
type Proxy struct {
	root     *url.URL // the upstream's root: /api/v1 below it is the API
	checker  *check.Checker
	max      int64
	rp       *httputil.ReverseProxy
	log      *slog.Logger
	now      func() time.Time
	report   io.Writer
	reportMu sync.Mutex
	rec      *recorder

	mu        sync.Mutex
	exchanges int // of the API
	others    int // outside the API, passed through unchecked
	withViol  int
	withDrift int
	skipped   int
	upstream  int // answered by the proxy: the upstream failed
	closeOnce sync.Once
	closeErr  error
}

// New returns a proxy in front of o.Upstream.
func New(o Options) (*Proxy, error) {
	root, err := upstreamRoot(o.Upstream)
	if err != nil {
		return nil, err
	}
	api := o.Contract
	if api == nil {
		if api, err = contract.Parse("openapi.json", o.Document); err != nil {
			return nil, err
		}
	}
	p := &Proxy{root: root, checker: check.New(api), max: o.MaxValidateBytes, log: o.Logger, now: o.Now, report: o.Report}
	if p.max <= 0 {
		p.max = DefaultMaxValidateBytes
	}
	if p.log == nil {
		p.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p.log = slog.New(scrubHandler{p.log.Handler()}) // and the lines of the standard library's proxy too
	if p.now == nil {
		p.now = time.Now
	}
	if o.RecordDir != "" {
		p.rec = newRecorder(o.RecordDir, p.log)
	}
	transport := o.Transport
	if transport == nil {
		transport = check.NewTransport(check.Timeouts{})
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(root)
			// Pass the client's forwarding headers on as they came.
			for _, h := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded"} {
				if v, ok := pr.In.Header[h]; ok {
					pr.Out.Header[h] = v
				}
			}
		},
		Transport:      transport,
		FlushInterval:  -1, // stream: every write reaches the client at once
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.upstreamError,
		ErrorLog:       slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
	}
	return p, nil
}

// upstreamRoot is the root of a base URL: https://h/api/v1 -> https://h.
func upstreamRoot(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("upstream %q: want an http(s) URL like https://api.example.com/api/v1", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("upstream %q: want a base URL without credentials, query or fragment", u.Redacted())
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), check.BasePath)
	u.RawPath = ""
	return u, nil
}

// Upstream is the upstream's root address.
func (p *Proxy) Upstream() string { return p.root.String() }

// Checker is the proxy's checker, for its statistics.
func (p *Proxy) Checker() *check.Checker { return p.checker }

// exchange is one request on its way through the proxy.
type exchange struct {
	pending *check.Pending
	url     *url.URL // as the client asked, path from /api/v1
	header  http.Header
	body    []byte
	secrets *check.Secrets // what must never be written about it
	skipped string
	inAPI   bool
	done    bool
	sent    time.Time // when the request reached the proxy, on Options.Now
}

type exchangeKey struct{}

// ServeHTTP forwards a request to the upstream, and checks the exchange.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == ReportPath {
		p.serveReport(w, r)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/_mock/proxy/") {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("No proxy endpoint at %s; the report is at GET %s.", r.URL.Path, ReportPath))
		return
	}
	x := &exchange{url: r.URL, header: r.Header.Clone(), inAPI: strings.HasPrefix(r.URL.Path, check.BasePath+"/"), sent: p.now()}
	x.pending = p.checker.Begin(r.Method, r.URL, r.Header.Get("Authorization"))
	defer func() {
		if !x.done {
			p.checker.Abandon(x.pending)
		}
	}()
	if x.inAPI {
		p.keepRequestBody(r, x)
	}
	x.secrets = check.RequestSecrets(r.Header, r.URL.Query(), x.body)
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x)))
}

// modifyResponse keeps up to max bytes of a JSON response of the API,
// checks the exchange, and adds the violations header.
func (p *Proxy) modifyResponse(resp *http.Response) error {
	x, _ := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	if x == nil {
		return nil
	}
	ex := &check.Exchange{Method: resp.Request.Method, URL: x.url, Header: x.header, Body: x.body, BodySkipped: x.skipped,
		Status: resp.StatusCode, ResponseHeader: resp.Header}
	if x.inAPI {
		if err := p.keepResponseBody(resp, ex); err != nil {
			return err
		}
	}
	x.done = true
	res := p.checker.Finish(x.pending, ex)
	if !x.inAPI {
		p.mu.Lock()
		p.others++
		p.mu.Unlock()
		return nil
	}
	if n := len(res.Violations); n > 0 {
		resp.Header.Set(ViolationsHeader, fmt.Sprintf("%d; rules=%s", n, strings.Join(ruleIDs(res.Violations), ",")))
	}
	if n := len(res.Drift); n > 0 {
		resp.Header.Set(DriftHeader, fmt.Sprintf("%d; kinds=%s", n, strings.Join(driftKinds(res.Drift), ",")))
	}
	p.mu.Lock()
	p.exchanges++
	if len(res.Violations) > 0 {
		p.withViol++
	}
	if len(res.Drift) > 0 {
		p.withDrift++
	}
	if len(res.Skipped) > 0 {
		p.skipped++
	}
	p.mu.Unlock()
	if len(res.Violations) > 0 || len(res.Drift) > 0 || len(res.Skipped) > 0 {
		p.writeLine(ex, res, x.secrets)
	}
	if p.rec != nil && ex.ResponseSkipped == "" && check.IsJSON(resp.Header) {
		p.rec.observe(answer{authorization: x.header.Get("Authorization"), secrets: x.secrets, opID: res.Operation, status: ex.Status,
			request: x.body, body: ex.ResponseBody, sent: x.sent, at: p.now(), waited: waits(x.url, x.body)})
	}
	return nil
}

// waits reports whether a request asked to wait for its job
// (wait_seconds above 0, in its query or its JSON body).
func waits(u *url.URL, body []byte) bool {
	if n, err := strconv.Atoi(u.Query().Get("wait_seconds")); err == nil && n > 0 {
		return true
	}
	var b struct {
		WaitSeconds json.Number `json:"wait_seconds"`
	}
	if json.Unmarshal(body, &b) != nil {
		return false
	}
	n, err := b.WaitSeconds.Float64()
	return err == nil && n > 0
}

func ruleIDs(vs []check.Violation) []string {
	var out []string
	for _, v := range vs {
		if !slices.Contains(out, v.Rule) {
			out = append(out, v.Rule)
		}
	}
	return out
}

func driftKinds(ds []check.Drift) []string {
	var out []string
	for _, kind := range check.DriftKinds {
		if slices.ContainsFunc(ds, func(d check.Drift) bool { return d.Kind == kind }) {
			out = append(out, kind)
		}
	}
	return out
}

// upstreamError answers when the upstream cannot be reached or its answer
// cannot be read: 502 (504 on a timeout) with the error object.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	x, _ := r.Context().Value(exchangeKey{}).(*exchange)
	if x != nil && !x.done {
		x.done = true
		p.checker.Abandon(x.pending)
	}
	var secrets *check.Secrets
	if x != nil {
		secrets = x.secrets
	}
	if r.Context().Err() != nil {
		return // the client went away
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // without the address, which may carry a query
	}
	status, code := http.StatusBadGateway, "upstream_unreachable"
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		status, code = http.StatusGatewayTimeout, "upstream_timeout"
	}
	p.mu.Lock()
	p.upstream++
	p.mu.Unlock()
	msg := secrets.Scrub(err.Error())
	p.log.Warn("upstream failed", "method", r.Method, "path", check.SafePath(r.URL.Path, secrets), "upstream", p.root.Host, "err", msg)
	writeError(w, status, code, fmt.Sprintf("The proxy cannot get an answer from the upstream %s: %s.", p.root.Host, msg))
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": message}})
	w.Write(append(b, '\n'))
}

// Close writes the recording, if one was asked for, and closes the idle
// connections to the upstream. It does not stop a server the proxy is
// mounted on: stop that first.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() {
		if p.rec != nil {
			_, p.closeErr = p.rec.write()
		}
	})
	if t, ok := p.rp.Transport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
	return p.closeErr
}

// WriteRecording writes the recording now and returns the fixture's path.
func (p *Proxy) WriteRecording() (string, error) {
	if p.rec == nil {
		return "", errors.New("no recording was asked for")
	}
	return p.rec.write()
}
