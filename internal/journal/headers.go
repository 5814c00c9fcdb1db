package journal

import (
	"iter"
	"slices"
	"strings"
)

// Headers are an exchange's headers as the journal keeps them: one
// "Name: value" line each, ended by a newline, names in the order of
// their canonical forms and a name's values in the order they came. A
// header's name has no colon and its value no newline (HTTP allows
// neither), so the lines read back as they were written.
type Headers string

// AppendHeaders appends h's lines to dst, up to MaxHeaderBytes of lines:
// a line that would go past it is left out, with the rest. Nothing of the
// map is kept: the journal copies the bytes.
func AppendHeaders(dst []byte, h map[string][]string) []byte {
	var stack [32]string
	names := stack[:0]
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	start := len(dst)
	for _, name := range names {
		for _, v := range h[name] {
			if len(dst)-start+len(name)+len(v)+3 > MaxHeaderBytes {
				return dst
			}
			dst = append(dst, name...)
			dst = append(dst, ": "...)
			dst = append(dst, v...)
			dst = append(dst, '\n')
		}
	}
	return dst
}

// All yields each header's name and value, in the order they are kept.
func (h Headers) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for line := range strings.SplitSeq(string(h), "\n") {
			name, value, ok := strings.Cut(line, ": ")
			if !ok {
				continue
			}
			if !yield(name, value) {
				return
			}
		}
	}
}

// Get is the first value of a header, by its name in any case; "" when
// it has none.
func (h Headers) Get(name string) string {
	for rest := string(h); rest != ""; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if n, v, ok := strings.Cut(line, ": "); ok && strings.EqualFold(n, name) {
			return v
		}
	}
	return ""
}
