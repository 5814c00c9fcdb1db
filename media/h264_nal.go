package media

import (
	"bytes"
	"math/bits"
)

// The H.264 bitstream's layers below the pictures (h264.go): bits written
// MSB first with the Exp-Golomb codes of the syntax (ue, se), and NAL units
// with their emulation prevention bytes.

// bitWriter writes MSB-first bits.
type bitWriter struct {
	buf []byte
	acc uint64
	n   uint // bits waiting in acc
}

// u writes the n low bits of v (n <= 32).
func (w *bitWriter) u(n uint, v uint64) {
	w.acc = w.acc<<n | v&(1<<n-1)
	w.n += n
	for w.n >= 8 {
		w.n -= 8
		w.buf = append(w.buf, byte(w.acc>>w.n))
	}
}

// ue writes an unsigned Exp-Golomb code.
func (w *bitWriter) ue(v uint64) {
	x := v + 1
	l := uint(bits.Len64(x))
	for z := l - 1; z > 0; z -= min(z, 32) {
		w.u(min(z, 32), 0)
	}
	if l > 32 {
		w.u(l-32, x>>32)
		w.u(32, x)
		return
	}
	w.u(l, x)
}

// se writes a signed Exp-Golomb code.
func (w *bitWriter) se(v int64) {
	if v > 0 {
		w.ue(uint64(2*v - 1))
	} else {
		w.ue(uint64(-2 * v))
	}
}

// flag writes one bit.
func (w *bitWriter) flag(b bool) {
	if b {
		w.u(1, 1)
	} else {
		w.u(1, 0)
	}
}

// trailing writes rbsp_trailing_bits: a stop bit and zero bits to the next byte.
func (w *bitWriter) trailing() {
	w.u(1, 1)
	if w.n > 0 {
		w.u(8-w.n, 0)
	}
}

// NAL unit types used here.
const (
	nalSlice = 1
	nalIDR   = 5
	nalSPS   = 7
	nalPPS   = 8
)

// nalUnit wraps an RBSP in a NAL unit header and inserts the emulation
// prevention bytes, without a start code (MP4 stores lengths instead).
func nalUnit(refIdc, typ int, rbsp []byte) []byte {
	return appendNAL(make([]byte, 0, len(rbsp)+len(rbsp)/64+2), refIdc, typ, rbsp)
}

// appendNAL appends the NAL unit of an RBSP to out (see nalUnit). Runs
// without two zero bytes in a row are copied at once.
func appendNAL(out []byte, refIdc, typ int, rbsp []byte) []byte {
	out = append(out, byte(refIdc<<5|typ))
	for len(rbsp) > 0 {
		i := bytes.Index(rbsp, zeroZero)
		if i < 0 {
			return append(out, rbsp...)
		}
		// Copy up to the pair (no escape is needed before it), then go
		// byte by byte up to the first non-zero byte after it.
		out = append(out, rbsp[:i]...)
		rbsp = rbsp[i:]
		zeros, j := 0, 0
		for j < len(rbsp) {
			b := rbsp[j]
			j++
			if zeros >= 2 && b <= 3 {
				out = append(out, 3)
				zeros = 0
			}
			out = append(out, b)
			if b != 0 {
				break
			}
			zeros++
		}
		rbsp = rbsp[j:]
	}
	return out
}

var zeroZero = []byte{0, 0}
