package report

import (
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/mediamock/mediamock/conformance"
)

// JUnitSuite is the name of the report's one suite, and the classname of
// its cases.
const JUnitSuite = "mediamock.client"

// JUnit is the report as a JUnit XML document (the form the conformance
// command writes, read by Jenkins, GitLab and GitHub's reporters): one
// case per rule; a finding that matches FailOn is a failure, one that does
// not passes with what it saw in system-out.
func JUnit(r Report) []byte {
	suite := conformance.JUnitSuite{Name: JUnitSuite, Time: "0.000", Timestamp: r.GeneratedAt.UTC().Format("2006-01-02T15:04:05"),
		Properties: &conformance.JUnitProperties{Property: []conformance.JUnitProperty{
			{Name: "scope", Value: r.Scope}, {Name: "fail_on", Value: strings.Join(r.FailOn, ",")},
			{Name: "requests", Value: fmt.Sprint(r.Summary.Requests)}}}}
	for _, rule := range Rules {
		c := conformance.JUnitCase{ClassName: JUnitSuite, Name: rule.ID, Time: "0.000"}
		for _, f := range r.Findings {
			if f.ID != rule.ID {
				continue
			}
			text := fmt.Sprintf("%s\nFix: %s\nRequests: %s", f.Detail, f.Fix, strings.Join(f.RequestIDs, " "))
			if matches(r.FailOn, f) {
				suite.Failures++
				c.Failures = []conformance.JUnitFailure{{Message: f.Title + ": " + f.Detail, Type: f.Severity, Text: text}}
			} else {
				c.SystemOut = strings.ToUpper(f.Severity) + " (not in fail_on): " + text
			}
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	doc := conformance.JUnitSuites{Name: "client report for " + r.Scope, Tests: suite.Tests, Failures: suite.Failures, Time: "0.000",
		Suites: []conformance.JUnitSuite{suite}}
	out, _ := xml.MarshalIndent(doc, "", "  ")
	return append(append([]byte(xml.Header), out...), '\n')
}

// matches reports whether a finding fails the report.
func matches(failOn []string, f Finding) bool {
	for _, v := range failOn {
		if v == f.ID || v == f.Severity {
			return true
		}
	}
	return false
}
