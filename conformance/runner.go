package conformance

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/mediamock/mediamock/internal/check"
	"github.com/mediamock/mediamock/internal/contract"
	"github.com/mediamock/mediamock/spec"
)

var checkerContract = sync.OnceValues(func() (*contract.Contract, error) {
	return contract.Parse("openapi.json", spec.OpenAPI)
})

// suite is one run.
type suite struct {
	cfg     Config
	base    string // BaseURL without a trailing slash
	prefix  string // its path, like /api/v1
	shown   string // the base URL as reports show it
	client  *http.Client
	checker *check.Checker
	started time.Time

	mu       sync.Mutex
	outcomes []Outcome              // of the checks, in the order they ran
	ruleHits map[string][]Violation // the first violations of each checker rule
	ruleMore map[string]int         // violations of a rule beyond those kept

	models []model // from GET /models
}

// maxRuleViolations is how many violations of one rule the report keeps
// (per rule; each check keeps all of its own).
const maxRuleViolations = 20

type model struct {
	ID                     string `json:"id"`
	Modality               string `json:"modality"`
	Track                  string `json:"track"`
	CreditsPerOutput       int64  `json:"credits_per_output"`
	RequiresReferenceImage bool   `json:"requires_reference_image"`
}

func newSuite(cfg Config) (*suite, error) {
	api, err := checkerContract()
	if err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	base, prefix, shown, err := parseBase(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	s := &suite{cfg: cfg, base: base, prefix: prefix, shown: shown, client: cfg.Client, checker: check.New(api), started: time.Now(),
		ruleHits: map[string][]Violation{}, ruleMore: map[string]int{}}
	if s.client == nil {
		s.client = &http.Client{Transport: check.NewTransport(check.Timeouts{})}
	}
	return s, nil
}

// scenario is one check of the suite; its name is also its id in the report.
type scenario struct {
	name, summary string
	fn            func(c *scenarioRun)
}

// scenarioRun is one check running.
type scenarioRun struct {
	ctx        context.Context
	s          *suite
	name       string
	log        func(line string)
	detail     string
	failures   []string
	violations []Violation
	logs       []string
	skipped    string
}

// stop ends a check early (a fatal failure or a skip): runScenario
// recovers it.
type stop struct{}

// runScenario runs one check and records its outcome; log, when set, sees
// each line the check logs as it logs it.
func (s *suite) runScenario(ctx context.Context, sc scenario, log func(string)) Outcome {
	c := &scenarioRun{ctx: ctx, s: s, name: sc.name, log: log}
	start := time.Now()
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(stop); !ok {
					c.failures = append(c.failures, fmt.Sprintf("the check broke: %v\n%s", v, debug.Stack()))
				}
			}
		}()
		if err := ctx.Err(); err != nil {
			c.fatalf("not run: %v", context.Cause(ctx))
		}
		sc.fn(c)
	}()
	o := Outcome{Rule: sc.name, Kind: KindCheck, Summary: sc.summary, Seconds: time.Since(start).Seconds(),
		Failures: c.failures, Violations: c.violations, Log: c.logs}
	switch {
	case len(c.failures) > 0:
		o.Status, o.Detail = StatusFailed, sc.summary
	case c.skipped != "":
		o.Status, o.Detail = StatusSkipped, c.skipped
	default:
		o.Status, o.Detail = StatusPassed, sc.summary
		if c.detail != "" {
			o.Detail += "; " + c.detail
		}
	}
	s.mu.Lock()
	s.outcomes = append(s.outcomes, o)
	s.mu.Unlock()
	return o
}

// errorf records a failure and goes on.
func (c *scenarioRun) errorf(format string, args ...any) {
	c.failures = append(c.failures, check.ScrubTokens(fmt.Sprintf(format, args...)))
}

// fatalf records a failure and ends the check.
func (c *scenarioRun) fatalf(format string, args ...any) {
	c.errorf(format, args...)
	panic(stop{})
}

// logf records a line of progress.
func (c *scenarioRun) logf(format string, args ...any) {
	line := check.ScrubTokens(fmt.Sprintf(format, args...))
	c.logs = append(c.logs, line)
	if c.log != nil {
		c.log(line)
	}
	if c.s.cfg.Log != nil {
		c.s.cfg.Log(c.name, line)
	}
}

// skip ends a check, saying why in the report.
func (c *scenarioRun) skip(format string, args ...any) {
	c.skipped = fmt.Sprintf(format, args...)
	panic(stop{})
}

func (c *scenarioRun) note(format string, args ...any) {
	if c.detail != "" {
		c.detail += "; "
	}
	c.detail += fmt.Sprintf(format, args...)
}

// violated records what the checker found wrong in one exchange: it fails
// the check and counts against the rule.
func (c *scenarioRun) violated(v Violation) {
	c.violations = append(c.violations, v)
	c.errorf("%s", v.String())
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if len(c.s.ruleHits[v.Rule]) < maxRuleViolations {
		c.s.ruleHits[v.Rule] = append(c.s.ruleHits[v.Rule], v)
	} else {
		c.s.ruleMore[v.Rule]++
	}
}

// skipReasons say why a rule of the checker may not apply in a run.
var skipReasons = map[string]string{
	check.RuleRequest:     "no request that breaks openapi.json was answered below 400",
	check.RuleOperation:   "no request outside every operation was made",
	check.RuleRetryAfter:  "no 429 was met: provoking one would use up the workspace's rate limit",
	check.RuleBalance:     "needs " + spending + " and " + keyAll + " that reads the account before it generates",
	check.RuleGift:        "no creation was covered by a monthly gift",
	check.RuleStatusOrder: "no asset with a status was seen",
	check.RuleListOrder:   "no list page was read",
	check.RuleListCursor:  "no list page was read",
}

func (s *suite) report() *Report {
	stats := s.checker.Stats()
	rep := &Report{URL: s.shown, Started: s.started.UTC(), Seconds: time.Since(s.started).Seconds()}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range check.Rules {
		st := stats[r.ID]
		o := Outcome{Rule: r.ID, Kind: KindRule, Summary: r.Summary, Applied: st.Applied}
		switch {
		case st.Violations > 0:
			o.Status, o.Detail = StatusFailed, fmt.Sprintf("%d violations in %d exchanges: %s", st.Violations, st.Applied, r.Summary)
			o.Violations = s.ruleHits[r.ID]
			for _, v := range o.Violations {
				o.Failures = append(o.Failures, v.String())
			}
			if n := s.ruleMore[r.ID]; n > 0 {
				o.Failures = append(o.Failures, fmt.Sprintf("and %d more", n))
			}
		case st.Applied > 0:
			o.Status, o.Detail = StatusPassed, fmt.Sprintf("held on %d exchanges: %s", st.Applied, r.Summary)
		default:
			o.Status, o.Detail = StatusSkipped, skipReasons[r.ID]
			if o.Detail == "" {
				o.Detail = "no exchange it applies to"
			}
		}
		rep.Outcomes = append(rep.Outcomes, o)
	}
	rep.Outcomes = append(rep.Outcomes, s.outcomes...)
	for _, o := range rep.Outcomes {
		switch o.Status {
		case StatusPassed:
			rep.Totals.Passed++
		case StatusFailed:
			rep.Totals.Failed++
		case StatusSkipped:
			rep.Totals.Skipped++
		}
	}
	return rep
}
