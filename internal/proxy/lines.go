package proxy

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/mediamock/mediamock/internal/check"
)

// Line is one line of the report: an exchange that breaks a rule, carries
// what the document does not declare, or could not be fully checked. It
// never holds a token.
type Line struct {
	Time       string            `json:"time"`
	Method     string            `json:"method"`
	Path       string            `json:"path"`
	Query      string            `json:"query,omitempty"`
	Credential string            `json:"credential"`
	Operation  string            `json:"operation,omitempty"`
	Status     int               `json:"status"`
	Violations []check.Violation `json:"violations,omitempty"`
	Drift      []check.Drift     `json:"drift,omitempty"`
	Skipped    []string          `json:"skipped,omitempty"`
}

func (p *Proxy) writeLine(ex *check.Exchange, res check.Result, secrets *check.Secrets) {
	if p.report == nil {
		return
	}
	line := Line{Time: p.now().UTC().Format(time.RFC3339), Method: ex.Method, Path: check.SafePath(ex.URL.Path, secrets), Query: check.SafeQuery(ex.URL.Query(), secrets),
		Credential: check.Mask(ex.Header.Get("Authorization")), Operation: res.Operation, Status: ex.Status}
	// A violation's message may quote what the client sent.
	for _, v := range res.Violations {
		line.Violations = append(line.Violations, check.Violation{Rule: v.Rule, Path: secrets.Scrub(v.Path), Message: secrets.Scrub(v.Message), Source: v.Source})
	}
	for _, d := range res.Drift {
		line.Drift = append(line.Drift, check.Drift{Kind: d.Kind, Path: secrets.Scrub(d.Path), Message: secrets.Scrub(d.Message), Source: d.Source})
	}
	for _, s := range res.Skipped {
		line.Skipped = append(line.Skipped, secrets.Scrub(s))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a query's & stays readable
	if enc.Encode(line) != nil {
		return
	}
	p.reportMu.Lock()
	defer p.reportMu.Unlock()
	if _, err := p.report.Write(b.Bytes()); err != nil {
		p.log.Warn("write the report", "err", err)
	}
}
