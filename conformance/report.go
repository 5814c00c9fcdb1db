package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// The statuses of an outcome.
const (
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// The kinds of an outcome: a rule of the checker, held on every exchange,
// or a check of the suite, a scenario of its own.
const (
	KindRule  = "rule"
	KindCheck = "check"
)

// Report is the outcome of every rule and check of a run: the rules of the
// checker first, in the order of the rule table, then the checks in the
// order they ran.
type Report struct {
	// URL is the base URL checked.
	URL string `json:"url"`
	// Started is when the run began (UTC); Seconds is how long it took.
	Started  time.Time `json:"started"`
	Seconds  float64   `json:"seconds"`
	Totals   Totals    `json:"totals"`
	Outcomes []Outcome `json:"outcomes"`
}

// Totals count the outcomes by status.
type Totals struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// Outcome is what became of one rule or check.
type Outcome struct {
	// Rule is the rule's id (openapi.body) or the check's (auth.missing_credentials).
	Rule string `json:"rule"`
	Kind string `json:"kind"` // rule or check
	// Status is passed, failed or skipped; Detail says what held, or why
	// it failed or was skipped.
	Status  string `json:"status"`
	Detail  string `json:"detail"`
	Summary string `json:"summary"`
	// Seconds is how long a check took (0 for a rule).
	Seconds float64 `json:"seconds"`
	// Applied is, for a rule, the number of exchanges it was held on.
	Applied int `json:"applied,omitempty"`
	// Failures are the messages of a failed rule or check, one each.
	Failures []string `json:"failures,omitempty"`
	// Violations are the exchanges that broke a rule of the checker: all
	// of a check's, the first 20 of a rule's.
	Violations []Violation `json:"violations,omitempty"`
	// Log is what a check logged as it ran (a 429 waited out).
	Log []string `json:"log,omitempty"`
}

// Violation is one rule an exchange broke.
type Violation struct {
	Method string `json:"method"`
	// Path is the request's, relative to the base URL (/assets?limit=2).
	Path string `json:"path"`
	// Credential is the request's Authorization, masked: no character of
	// the key is shown.
	Credential string `json:"credential,omitempty"`
	Status     int    `json:"status"`
	Rule       string `json:"rule"`
	// At is where: a JSON path in the response body, a header, the status.
	At      string `json:"at"`
	Message string `json:"message"`
}

// String is the violation on one line.
func (v Violation) String() string {
	cred := ""
	if v.Credential != "" {
		cred = " (" + v.Credential + ")"
	}
	return fmt.Sprintf("%s %s%s -> %d: %s at %s: %s", v.Method, v.Path, cred, v.Status, v.Rule, v.At, v.Message)
}

// Failed counts the failed outcomes.
func (r *Report) Failed() int {
	n := 0
	for _, o := range r.Outcomes {
		if o.Status == StatusFailed {
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

// WriteJSON writes the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
