// Package junit is the JUnit XML document, in the form Jenkins, GitLab and
// GitHub's test reporters read: <testsuites>, its <testsuite>s, one
// <testcase> per rule or check. The conformance suite (whose public names
// are aliases of these) and the client report write it; standard library
// only.
//
//	doc := junit.Suites{Name: "client report", Suites: []junit.Suite{suite}}
//	err := junit.Write(w, &doc)
package junit

import (
	"encoding/xml"
	"io"
)

// Suites is the root element of a JUnit XML report. It has no skipped
// count of its own (Jenkins' schema has none there): each suite has.
type Suites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Time     string   `xml:"time,attr"`
	Suites   []Suite  `xml:"testsuite"`
}

// Suite is one <testsuite>.
type Suite struct {
	Name       string      `xml:"name,attr"`
	Tests      int         `xml:"tests,attr"`
	Failures   int         `xml:"failures,attr"`
	Errors     int         `xml:"errors,attr"`
	Skipped    int         `xml:"skipped,attr"`
	Time       string      `xml:"time,attr"`
	Timestamp  string      `xml:"timestamp,attr"`
	Properties *Properties `xml:"properties,omitempty"`
	Cases      []Case      `xml:"testcase"`
}

// Properties are a suite's <properties>.
type Properties struct {
	Property []Property `xml:"property"`
}

// Property is one <property name value>.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// Case is one <testcase>: a rule or a check.
type Case struct {
	ClassName string    `xml:"classname,attr"`
	Name      string    `xml:"name,attr"`
	Time      string    `xml:"time,attr"`
	Skipped   *Skipped  `xml:"skipped"`
	Failures  []Failure `xml:"failure"`
	SystemOut string    `xml:"system-out,omitempty"`
}

// Skipped says why a case was skipped.
type Skipped struct {
	Message string `xml:"message,attr"`
}

// Failure is a failed case: message is its first failure, the text all of
// them.
type Failure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// Timestamp is the layout of a suite's timestamp attribute (UTC, no zone).
const Timestamp = "2006-01-02T15:04:05"

// Write writes doc as a JUnit XML document: the XML header, the document
// indented by two spaces, a final newline.
func Write(w io.Writer, doc *Suites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
