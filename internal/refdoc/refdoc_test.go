package refdoc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCell(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "–"},
		{"  ", "–"},
		{"a | b", `a \| b`},
		{"`^(ns|us)$`", "`^(ns\\|us)$`"},
		{"one\ntwo", "one<br>two"},
		{"one\n\ntwo", "one<br><br>two"},
		{"one\r\ntwo", "one<br>two"},
	} {
		if got := Cell(c.in); got != c.want {
			t.Errorf("Cell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"x", "`x`"},
		{"a`b", "``a`b``"},
		{"`x", "`` `x ``"},
	} {
		if got := Code(c.in); got != c.want {
			t.Errorf("Code(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Slug makes the anchors GitHub makes.
func TestSlug(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"mockserver spec-diff", "mockserver-spec-diff"},
		{"`POST /_mock/faults/fail-next`", "post-_mockfaultsfail-next"},
		{"`GET /_mock/openapi.json`", "get-_mockopenapijson"},
		{"`PUT /_mock/faults/platforms/{platform}`", "put-_mockfaultsplatformsplatform"},
		{"Schema `FaultSpec`", "schema-faultspec"},
		{"job_failure", "job_failure"},
	} {
		if got := Slug(c.in); got != c.want {
			t.Errorf("Slug(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPage(t *testing.T) {
	p := New("Title", "the source", "go test ./x -run TestX -update-docs")
	p.Para("A paragraph.")
	p.Table([]string{"a", "b"}, [][]string{{"1", "x | y"}, {"", "z"}})
	p.List([]string{"one", "two\nlines"})
	p.Code("", "mockserver")
	want := "> Generated from the source by `go test ./x -run TestX -update-docs`: do not edit it by hand.\n\n# Title\n\n" +
		"A paragraph.\n\n| a | b |\n|---|---|\n| 1 | x \\| y |\n| – | z |\n\n- one\n- two lines\n\n```\nmockserver\n```\n"
	if got := string(p.Bytes()); got != want {
		t.Errorf("page:\n%s\nwant:\n%s", got, want)
	}
}

// recorder is a test that remembers its errors.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatal(args ...any) { r.errors = append(r.errors, fmt.Sprint(args...)) }

// A stale page fails, naming the page, the command that rewrites it and
// the first line that differs; an up-to-date one passes; update writes it.
func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "page.md")
	const cmd = "go test ./x -run TestX -update-docs"
	r := &recorder{TB: t}
	Check(r, path, []byte("a\nb\n"), false, cmd)
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], cmd) {
		t.Errorf("a missing page: %q", r.errors)
	}
	r = &recorder{TB: t}
	Check(r, path, []byte("a\nb\n"), true, cmd)
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\nb\n" || len(r.errors) != 0 {
		t.Fatalf("update wrote %q (%v), errors %q", b, err, r.errors)
	}
	Check(r, path, []byte("a\nb\n"), false, cmd)
	if len(r.errors) != 0 {
		t.Errorf("an up-to-date page fails: %q", r.errors)
	}
	Check(r, path, []byte("a\nc\n"), false, cmd)
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "stale: run "+cmd) ||
		!strings.Contains(r.errors[0], "line 2, column 1:\n  committed: b\n  generated: c") {
		t.Errorf("a stale page: %q", r.errors)
	}
	r = &recorder{TB: t}
	Check(r, path, []byte("a\nb\nc\n"), false, cmd)
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "line 3,") {
		t.Errorf("a page grown by a line: %q", r.errors)
	}
}

// A long line shows the part around its first difference.
func TestFirstDifferenceOfALongLine(t *testing.T) {
	long := strings.Repeat("x", 300)
	got := FirstDifference([]byte(long+"a"+long+"\n"), []byte(long+"b"+long+"\n"))
	if !strings.Contains(got, "line 1, column 301") || !strings.Contains(got, "x"+"a"+"x") || !strings.Contains(got, "x"+"b"+"x") {
		t.Errorf("got %s", got)
	}
}
