package problem

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func unknown(n int) []Violation {
	out := make([]Violation, n)
	for i := range out {
		out[i] = Violation{In: "body", Field: fmt.Sprintf("f%03d", i), Reason: "unknown field"}
	}
	return out
}

// An error lists at most MaxViolations violations, the first ones, and
// says how many more there were, in its details and its message; one of
// MaxViolations or fewer is as it always was.
func TestAnErrorListsTheFirstViolations(t *testing.T) {
	for _, n := range []int{1, MaxViolations, MaxViolations + 1, 1000} {
		e := InvalidError(unknown(n))
		listed := min(n, MaxViolations)
		assert.Equal(t, unknown(listed), e.Details["violations"], "%d violations", n)
		assert.True(t, strings.HasPrefix(e.Message, fmt.Sprintf("%d problem", n)), e.Message)
		assert.Equal(t, listed, strings.Count(e.Message, "unknown field"), e.Message)
		if n > MaxViolations {
			assert.Equal(t, n-MaxViolations, e.Details["more_violations"])
			assert.True(t, strings.HasSuffix(e.Message, fmt.Sprintf("; and %d more", n-MaxViolations)), e.Message)
		} else {
			assert.NotContains(t, e.Details, "more_violations")
		}
		data, err := json.Marshal(e.Details)
		require.NoError(t, err)
		assert.Less(t, len(data), 64*MaxViolations, "the details stay small: %d violations", n)
	}
	e := Invalid(unknown(3), 997)
	assert.Equal(t, unknown(3), e.Details["violations"])
	assert.Equal(t, 997, e.Details["more_violations"])
	assert.True(t, strings.HasPrefix(e.Message, "1000 problems with the request: body f000: unknown field;"), e.Message)
}

// Violations keeps the first MaxViolations and counts the others, without
// formatting them; what a validator counted without keeping comes after
// everything appended before it.
func TestViolationsKeepTheFirst(t *testing.T) {
	var v Violations
	for i := range 1000 {
		v.Add(fmt.Sprintf("f%03d", i), "unknown field")
	}
	assert.Equal(t, unknown(MaxViolations), v.List())
	assert.Equal(t, 1000, v.Len())
	listed, more, ok := Of(v.Err())
	require.True(t, ok)
	assert.Equal(t, unknown(MaxViolations), listed)
	assert.Equal(t, 1000-MaxViolations, more)

	var w Violations
	w.Append(unknown(2)...)
	w.Uncounted(5)
	w.Add("late", "comes after the counted ones")
	assert.Equal(t, unknown(2), w.List(), "nothing is kept past what was counted")
	assert.Equal(t, 8, w.Len())
	_, more, ok = Of(w.Err())
	require.True(t, ok)
	assert.Equal(t, 6, more)

	allocs := testing.AllocsPerRun(100, func() { w.Add("x", "%s %d", "formatted", 1) })
	assert.Zero(t, allocs, "a violation past the list is counted, not formatted")
}

// Merging a front's violations into a verdict that counted more than it
// lists adds them to the count.
func TestMergeCounts(t *testing.T) {
	err := Merge(InvalidError(unknown(30)), violations(Violation{In: "arguments", Field: "zz", Reason: "unknown field"}))
	v, more, ok := Of(err)
	require.True(t, ok)
	assert.Equal(t, unknown(MaxViolations), v)
	assert.Equal(t, 11, more)

	err = Merge(InvalidError(unknown(2)), violations(unknown(30)...))
	v, more, _ = Of(err)
	assert.Equal(t, append(unknown(2), unknown(18)...), v)
	assert.Equal(t, 12, more)
}

// FirstNames keeps the first names in sorted order, whatever order they
// come in, and counts the others.
func TestFirstNames(t *testing.T) {
	var names []string
	for i := range 500 {
		names = append(names, fmt.Sprintf("k%03d", (i*7919)%500))
	}
	var f FirstNames
	kept := map[string]bool{}
	for _, n := range names {
		if !f.Wants(n) {
			ok, _, _ := f.Add(n)
			assert.False(t, ok, "Wants says what Add keeps: %s", n)
			continue
		}
		ok, evicted, was := f.Add(n)
		require.True(t, ok, n)
		kept[n] = true
		if was {
			require.True(t, kept[evicted], evicted)
			delete(kept, evicted)
		}
	}
	want := slices.Sorted(slices.Values(names))[:MaxViolations]
	assert.Equal(t, want, f.Sorted())
	assert.Len(t, kept, MaxViolations)
	assert.Equal(t, 500-MaxViolations, f.More())

	ok, _, evicted := f.Add(want[3])
	assert.True(t, ok)
	assert.False(t, evicted, "a name kept already changes nothing")
	assert.Equal(t, 500-MaxViolations, f.More())
}
