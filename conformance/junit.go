package conformance

import (
	"fmt"
	"io"
	"strings"

	"github.com/mediamock/mediamock/internal/junit"
)

// The JUnit XML report, in the form Jenkins, GitLab and GitHub's test
// reporters read: <testsuites> with two <testsuite>, the rules of the
// checker and the checks of the suite, one <testcase> each. The elements
// are defined once, in the module's JUnit package, which the server's
// client report writes too; these are their names here.

// JUnitSuites is the root element of a JUnit XML report. It has no
// skipped count of its own (Jenkins' schema has none there): each suite has.
type JUnitSuites = junit.Suites

// JUnitSuite is one <testsuite>.
type JUnitSuite = junit.Suite

// JUnitProperties are a suite's <properties>.
type JUnitProperties = junit.Properties

// JUnitProperty is one <property name value>.
type JUnitProperty = junit.Property

// JUnitCase is one <testcase>: a rule or a check.
type JUnitCase = junit.Case

// JUnitSkipped says why a case was skipped.
type JUnitSkipped = junit.Skipped

// JUnitFailure is a failed case: message is its first failure, the text
// all of them.
type JUnitFailure = junit.Failure

// The suites' names, also the classname of their cases.
const (
	JUnitRules  = "conformance.rules"
	JUnitChecks = "conformance.checks"
)

// JUnit is the report as a JUnit XML document.
func (r *Report) JUnit() *JUnitSuites {
	stamp := r.Started.UTC().Format(junit.Timestamp)
	props := &JUnitProperties{Property: []JUnitProperty{{Name: "url", Value: r.URL}}}
	rules := JUnitSuite{Name: JUnitRules, Timestamp: stamp, Time: seconds(0), Properties: props}
	checks := JUnitSuite{Name: JUnitChecks, Timestamp: stamp, Properties: props}
	var checksTime float64
	for _, o := range r.Outcomes {
		suite := &checks
		if o.Kind == KindRule {
			suite = &rules
		} else {
			checksTime += o.Seconds
		}
		c := JUnitCase{ClassName: suite.Name, Name: o.Rule, Time: seconds(o.Seconds)}
		switch o.Status {
		case StatusFailed:
			suite.Failures++
			msg := o.Detail
			if len(o.Failures) > 0 {
				msg = o.Failures[0]
			}
			c.Failures = []JUnitFailure{{Message: firstLine(msg), Type: o.Rule, Text: strings.Join(o.Failures, "\n")}}
			c.SystemOut = o.Detail
		case StatusSkipped:
			suite.Skipped++
			c.Skipped = &JUnitSkipped{Message: o.Detail}
		default:
			c.SystemOut = o.Detail
		}
		if len(o.Log) > 0 {
			c.SystemOut = strings.TrimLeft(c.SystemOut+"\n"+strings.Join(o.Log, "\n"), "\n")
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	checks.Time = seconds(checksTime)
	return &JUnitSuites{Name: "conformance of " + r.URL, Time: seconds(r.Seconds),
		Tests: rules.Tests + checks.Tests, Failures: rules.Failures + checks.Failures,
		Suites: []JUnitSuite{rules, checks}}
}

// WriteJUnit writes the report as a JUnit XML document.
func (r *Report) WriteJUnit(w io.Writer) error {
	return junit.Write(w, r.JUnit())
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
