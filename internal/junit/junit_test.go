package junit

import (
	"bytes"
	"testing"
)

// Write's form is what CI reporters and the committed examples read: the
// XML header, two-space indents, a final newline; a case with no failure
// and no skip has neither element.
func TestWrite(t *testing.T) {
	doc := &Suites{Name: "n", Tests: 2, Failures: 1, Time: "0.000", Suites: []Suite{{
		Name: "s", Tests: 2, Failures: 1, Time: "0.000", Timestamp: "2026-01-02T03:04:05",
		Properties: &Properties{Property: []Property{{Name: "url", Value: "http://x/?a=1&b=2"}}},
		Cases: []Case{
			{ClassName: "s", Name: "ok", Time: "0.001"},
			{ClassName: "s", Name: "bad", Time: "0.002", Failures: []Failure{{Message: "m", Type: "t", Text: "a < b"}}},
		},
	}}}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="n" tests="2" failures="1" errors="0" time="0.000">
  <testsuite name="s" tests="2" failures="1" errors="0" skipped="0" time="0.000" timestamp="2026-01-02T03:04:05">
    <properties>
      <property name="url" value="http://x/?a=1&amp;b=2"></property>
    </properties>
    <testcase classname="s" name="ok" time="0.001"></testcase>
    <testcase classname="s" name="bad" time="0.002">
      <failure message="m" type="t">a &lt; b</failure>
    </testcase>
  </testsuite>
</testsuites>
`
	var out bytes.Buffer
	if err := Write(&out, doc); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("Write wrote\n%s\nwant\n%s", out.String(), want)
	}
}
