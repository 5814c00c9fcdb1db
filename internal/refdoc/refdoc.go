// Package refdoc writes the reference pages under docs/reference, each
// generated from its source of truth (the flag sets, control.json, the
// fault kind table, the operation rows) by a plain function of the package
// that owns the source; the generator (internal/gen, run by go generate
// ./...) writes them all, and its test fails when a committed one is stale:
//
//	p := refdoc.New("Client findings", "the rules of `internal/report`", refdoc.Command)
//	p.Table([]string{"id", "severity", "title"}, rows)
//	page := p.Bytes()
//
// A page is deterministic: no time, no path of the machine, rows in the
// order of their source or sorted.
package refdoc

import (
	"bytes"
	"fmt"
	"strings"
)

// Command is the command that writes every generated file, the one a
// generated page names.
const Command = "go generate ./..."

// A Page is a generated Markdown page.
type Page struct {
	// Command rewrites the page.
	Command string
	buf     bytes.Buffer
}

// New starts a page: the line that says it is generated, from what, and
// the command that rewrites it, then its title.
func New(title, source, command string) *Page {
	p := &Page{Command: command}
	fmt.Fprintf(&p.buf, "> Generated from %s by `%s`: do not edit it by hand.\n\n# %s\n", source, command, title)
	return p
}

// Heading adds a heading of level (2 for ##).
func (p *Page) Heading(level int, text string) {
	fmt.Fprintf(&p.buf, "\n%s %s\n", strings.Repeat("#", level), text)
}

// Para adds a paragraph; an empty one adds nothing.
func (p *Page) Para(text string) {
	if text = strings.TrimSpace(text); text != "" {
		fmt.Fprintf(&p.buf, "\n%s\n", text)
	}
}

// List adds a bulleted list, one item a line.
func (p *Page) List(items []string) {
	if len(items) == 0 {
		return
	}
	p.buf.WriteString("\n")
	for _, it := range items {
		fmt.Fprintf(&p.buf, "- %s\n", strings.ReplaceAll(strings.TrimSpace(it), "\n", " "))
	}
}

// Table adds a table; every cell is escaped with Cell.
func (p *Page) Table(header []string, rows [][]string) {
	p.buf.WriteString("\n")
	row := func(cells []string) {
		p.buf.WriteString("|")
		for _, c := range cells {
			p.buf.WriteString(" " + Cell(c) + " |")
		}
		p.buf.WriteString("\n")
	}
	row(header)
	p.buf.WriteString("|" + strings.Repeat("---|", len(header)) + "\n")
	for _, r := range rows {
		row(r)
	}
}

// Code adds a fenced code block.
func (p *Page) Code(lang, text string) {
	fmt.Fprintf(&p.buf, "\n```%s\n%s\n```\n", lang, strings.TrimRight(text, "\n"))
}

// Bytes is the page as written to its file.
func (p *Page) Bytes() []byte { return p.buf.Bytes() }

// Cell makes text fit a table cell: a | is escaped, line breaks become
// <br>, and an empty cell shows a dash.
func Cell(text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return "–"
	}
	text = strings.ReplaceAll(text, `|`, `\|`)
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\n\n", "<br><br>")
	return strings.ReplaceAll(text, "\n", "<br>")
}

// Code quotes text as inline code, with enough backticks for the ones it
// holds.
func Code(text string) string {
	if text == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	if strings.HasPrefix(text, "`") || strings.HasSuffix(text, "`") {
		return fence + " " + text + " " + fence
	}
	return fence + text + fence
}

// FirstDifference shows the first line where a committed file and the
// one generated differ, the part of each line around the first column
// that differs.
func FirstDifference(committed, generated []byte) string {
	a, b := strings.Split(string(committed), "\n"), strings.Split(string(generated), "\n")
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y || i >= len(a) || i >= len(b) {
			at := 0
			for at < len(x) && at < len(y) && x[at] == y[at] {
				at++
			}
			return fmt.Sprintf("first difference at line %d, column %d:\n  committed: %s\n  generated: %s", i+1, at+1, clip(x, at), clip(y, at))
		}
	}
	return ""
}

// clip shows a long line around column at: what comes a little before it
// and after it.
func clip(s string, at int) string {
	const before, width = 60, 200
	start := 0
	if len(s) > width && at > before {
		start = at - before
	}
	end := min(len(s), start+width)
	out := s[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(s) {
		out += "…"
	}
	return out
}

// Slug is a heading's anchor, as GitHub makes it: lower case, spaces as
// dashes, only letters, digits, dashes and underscores kept.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}
