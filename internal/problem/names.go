package problem

import (
	"slices"
	"strings"
)

// FirstNames keeps, of the names it is given, the MaxViolations first in
// sorted order, and counts the others: the unknown fields of an object as
// a validator lists them (sorted, as kin-openapi visits an object's
// members), without holding a million of them. The zero value is empty.
type FirstNames struct {
	kept []string // a max-heap: kept[0] is the greatest
	more int
}

// Wants reports whether Add would keep name: a caller that makes the
// name's string only for a name kept asks first.
func (f *FirstNames) Wants(name string) bool {
	return len(f.kept) < MaxViolations || name < f.kept[0] || slices.Contains(f.kept, name)
}

// Add offers a name. kept says whether it is among the first; a name that
// no longer is, having been kept until now, is evicted (ok set). A name
// kept already changes nothing; one offered again after it was counted is
// counted again.
func (f *FirstNames) Add(name string) (kept bool, evicted string, ok bool) {
	if slices.Contains(f.kept, name) {
		return true, "", false
	}
	if len(f.kept) < MaxViolations {
		f.kept = append(f.kept, name)
		f.up(len(f.kept) - 1)
		return true, "", false
	}
	f.more++
	if name > f.kept[0] {
		return false, "", false
	}
	evicted, f.kept[0] = f.kept[0], name
	f.down(0)
	return true, evicted, true
}

// Sorted are the names kept, in order.
func (f *FirstNames) Sorted() []string {
	out := slices.Clone(f.kept)
	slices.Sort(out)
	return out
}

// More is how many names were counted and not kept.
func (f *FirstNames) More() int { return f.more }

func (f *FirstNames) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if strings.Compare(f.kept[p], f.kept[i]) >= 0 {
			return
		}
		f.kept[p], f.kept[i] = f.kept[i], f.kept[p]
		i = p
	}
}

func (f *FirstNames) down(i int) {
	for {
		l, big := 2*i+1, i
		if l < len(f.kept) && f.kept[l] > f.kept[big] {
			big = l
		}
		if r := l + 1; r < len(f.kept) && f.kept[r] > f.kept[big] {
			big = r
		}
		if big == i {
			return
		}
		f.kept[i], f.kept[big] = f.kept[big], f.kept[i]
		i = big
	}
}
