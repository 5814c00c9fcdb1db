package report

import "strconv"

// counted is a count as English reads it: "1 job", "2 jobs", "2,000
// reads".
func counted(n int, one, many string) string {
	return grouped(n) + " " + plural(n, one, many)
}

// plural is one for 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// grouped writes a whole number with its thousands grouped: 12,345.
func grouped(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
