package seed

import (
	"hash/fnv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The streams are part of the simulation's output: they must never change.
func TestStreamsAreFixed(t *testing.T) {
	for _, s := range []string{"", "a", "job/42"} {
		h := fnv.New64a()
		h.Write([]byte(s))
		assert.Equal(t, h.Sum64(), Hash(s), "FNV-1a of %q", s)
	}
	r := New(0)
	assert.Equal(t, uint64(0xe220a8397b1dcdaf), r.Uint64(), "SplitMix64 from 0")
	assert.Equal(t, uint64(0x6e789e6aa1b965f4), r.Uint64())
	assert.NotEqual(t, Derive(1, "job", 2), Derive(1, "job", 3))
	assert.NotEqual(t, Derive(1, "job", 2), Derive(1, "fate", 2))
	for i := 0; i < 1000; i++ {
		f := r.Float64()
		assert.True(t, f >= 0 && f < 1)
		n := r.IntN(7)
		assert.True(t, n >= 0 && n < 7)
	}
}
