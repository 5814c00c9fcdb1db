package sim

import (
	"hash/fnv"
	"math/rand/v2"
)

// Rand returns the random generator of one entity, derived from the seed, a
// purpose and the entity's id, so that results never depend on the order in
// which goroutines ran.
func Rand(seed uint64, purpose string, id uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, DeriveSeed(seed, purpose, id)))
}

// DeriveSeed mixes the seed, a purpose and an id into a new 64-bit seed.
func DeriveSeed(seed uint64, purpose string, id uint64) uint64 {
	h := fnv.New64a()
	h.Write([]byte(purpose))
	return splitmix(seed ^ splitmix(h.Sum64()^splitmix(id)))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
