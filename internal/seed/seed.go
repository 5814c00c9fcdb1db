// Package seed derives every random choice of the simulation from one
// seed: a hash of names, a mixer of 64-bit values, and a generator whose
// output is fixed by its definition (SplitMix64), so the same seed gives the
// same bytes on every Go release and platform (math/rand makes no such
// promise for every method).
//
// It is for choices, never for secrets: SplitMix64's mixer is a bijection,
// so an output gives its input back, and anyone who knows the seed knows
// every output. Credentials come from crypto/rand (see sim/secrets.go).
package seed

import "math/bits"

// golden is the increment of SplitMix64.
const golden = 0x9E3779B97F4A7C15

// Hash is the 64-bit FNV-1a hash of s.
func Hash(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

// Mix is the finalizer of SplitMix64: a bijection that spreads every input
// bit over the output.
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func step(x uint64) uint64 { return Mix(x + golden) }

// Derive mixes a seed, a purpose and an entity's id into a new seed, so that
// each entity has its own stream whatever order goroutines run in.
func Derive(seed uint64, purpose string, id uint64) uint64 {
	return step(seed ^ step(Hash(purpose)^step(id)))
}

// RNG is a SplitMix64 generator.
type RNG struct{ s uint64 }

// New returns a generator seeded with s.
func New(s uint64) *RNG { return &RNG{s: s} }

// For returns the generator of one entity: Derive(seed, purpose, id).
func For(seed uint64, purpose string, id uint64) *RNG { return New(Derive(seed, purpose, id)) }

// Uint64 returns the next 64 random bits.
func (r *RNG) Uint64() uint64 {
	r.s += golden
	return Mix(r.s)
}

// Float64 returns a number in [0, 1).
func (r *RNG) Float64() float64 { return float64(r.Uint64()>>11) * 0x1p-53 }

// IntN returns a number in [0, n); n must be positive.
func (r *RNG) IntN(n int) int {
	hi, _ := bits.Mul64(r.Uint64(), uint64(n))
	return int(hi)
}
