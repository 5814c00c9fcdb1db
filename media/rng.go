package media

import (
	"math/bits"

	"github.com/mediamock/mediamock/internal/seed"
)

// rng is a SplitMix64 generator (package seed): its output is fixed by its
// definition, so files stay identical across Go releases and platforms.
type rng struct{ *seed.RNG }

// newRNG seeds a generator from the seed, the prompt and a salt naming the
// use, so that unrelated choices do not share a stream.
func newRNG(s uint64, prompt, salt string) *rng {
	h := seed.Mix(seed.Hash(prompt) ^ seed.Hash(salt)*0x9E3779B97F4A7C15)
	return &rng{seed.New(seed.Mix(s ^ h))}
}

func (r *rng) next() uint64 { return r.Uint64() }

// intn returns a number in [0, n); n must be positive.
func (r *rng) intn(n int) int { return r.IntN(n) }

// between returns a number in [lo, hi].
func (r *rng) between(lo, hi int) int { return lo + r.intn(hi-lo+1) }

// isqrt returns floor(sqrt(n)) for n >= 0, in integers only.
func isqrt(n int64) int64 {
	if n <= 0 {
		return 0
	}
	x := int64(1) << ((bits.Len64(uint64(n)) + 1) / 2) // x >= sqrt(n)
	for {
		y := (x + n/x) / 2
		if y >= x {
			return x
		}
		x = y
	}
}

// rgb is an opaque 8-bit colour.
type rgb struct{ r, g, b uint8 }

// hsv converts a hue in degrees [0, 360) and a saturation and value in
// [0, 255] to RGB, in integers.
func hsv(h, s, v int) rgb {
	h %= 360
	if h < 0 {
		h += 360
	}
	sector, rem := h/60, h%60
	p := v * (255 - s) / 255
	q := v * (255 - s*rem/60) / 255
	t := v * (255 - s*(60-rem)/60) / 255
	var r, g, b int
	switch sector {
	case 0:
		r, g, b = v, t, p
	case 1:
		r, g, b = q, v, p
	case 2:
		r, g, b = p, v, t
	case 3:
		r, g, b = p, q, v
	case 4:
		r, g, b = t, p, v
	default:
		r, g, b = v, p, q
	}
	return rgb{uint8(r), uint8(g), uint8(b)}
}

// lerp mixes two colours: k/n of b and the rest of a.
func lerp(a, b rgb, k, n int) rgb {
	if n <= 0 {
		return a
	}
	mixc := func(x, y uint8) uint8 { return uint8((int(x)*(n-k) + int(y)*k + n/2) / n) }
	return rgb{mixc(a.r, b.r), mixc(a.g, b.g), mixc(a.b, b.b)}
}
