package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/mediamock/mediamock/internal/junit"
)

// JUnitSuite is the name of the report's one suite, and the classname of
// its cases.
const JUnitSuite = "mediamock.client"

// JUnit is the report as a JUnit XML document (the form the conformance
// command writes, read by Jenkins, GitLab and GitHub's reporters): one
// case per rule; a finding that matches FailOn is a failure, one that does
// not passes with what it saw in system-out.
func JUnit(r Report) []byte {
	suite := junit.Suite{Name: JUnitSuite, Time: "0.000", Timestamp: r.GeneratedAt.UTC().Format(junit.Timestamp),
		Properties: &junit.Properties{Property: []junit.Property{
			{Name: "scope", Value: r.Scope}, {Name: "fail_on", Value: strings.Join(r.FailOn, ",")},
			{Name: "requests", Value: fmt.Sprint(r.Summary.Requests)}}}}
	for _, rule := range Rules {
		c := junit.Case{ClassName: JUnitSuite, Name: rule.ID, Time: "0.000"}
		for _, f := range r.Findings {
			if f.ID != rule.ID {
				continue
			}
			text := fmt.Sprintf("%s\nFix: %s\nRequests (journal seq): %s\nRequest ids: %s", f.Detail, f.Fix, seqList(f.Seqs), strings.Join(f.RequestIDs, " "))
			if f.ExamplesDropped > 0 {
				text += fmt.Sprintf("\nExample requests no longer in the journal: %d", f.ExamplesDropped)
			}
			if matches(r.FailOn, f) {
				suite.Failures++
				c.Failures = []junit.Failure{{Message: f.Title + ": " + f.Detail, Type: f.Severity, Text: text}}
			} else {
				c.SystemOut = strings.ToUpper(f.Severity) + " (not in fail_on): " + text
			}
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	doc := junit.Suites{Name: "client report for " + r.Scope, Tests: suite.Tests, Failures: suite.Failures, Time: "0.000",
		Suites: []junit.Suite{suite}}
	var out bytes.Buffer
	_ = junit.Write(&out, &doc) // a bytes.Buffer takes every write
	return out.Bytes()
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
