package media

import (
	"encoding/binary"
	"image"
	"math/bits"
)

// This file is a baseline JPEG encoder (ITU-T T.81, 4:2:0, the Annex K
// tables) for the flat pictures of this package. It reads the paletted
// picture directly: an 8x8 block whose pixels share one palette entry,
// the vast majority, is coded as its DC coefficient and an end of block
// without any transform; only the blocks along shape edges go through an
// integer DCT. That makes it several times faster than image/jpeg here,
// with output any JPEG decoder reads.

// zigzag maps the position in zig-zag order to the position in the block.
var zigzag = [64]uint8{
	0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
}

// baseQuant holds the quantisation tables of Annex K.1 (luminance) and
// K.2 (chrominance), in natural order.
var baseQuant = [2][64]int32{{
	16, 11, 10, 16, 24, 40, 51, 61,
	12, 12, 14, 19, 26, 58, 60, 55,
	14, 13, 16, 24, 40, 57, 69, 56,
	14, 17, 22, 29, 51, 87, 80, 62,
	18, 22, 37, 56, 68, 109, 103, 77,
	24, 35, 55, 64, 81, 104, 113, 92,
	49, 64, 78, 87, 103, 121, 120, 101,
	72, 92, 95, 98, 112, 100, 103, 99,
}, {
	17, 18, 24, 47, 99, 99, 99, 99,
	18, 21, 26, 66, 99, 99, 99, 99,
	24, 26, 56, 99, 99, 99, 99, 99,
	47, 66, 99, 99, 99, 99, 99, 99,
	99, 99, 99, 99, 99, 99, 99, 99,
	99, 99, 99, 99, 99, 99, 99, 99,
	99, 99, 99, 99, 99, 99, 99, 99,
	99, 99, 99, 99, 99, 99, 99, 99,
}}

// huffSpec is a Huffman table as JPEG stores it: the number of codes of
// each length 1..16, then the symbols in code order.
type huffSpec struct {
	counts [16]uint8
	values []uint8
}

// The Huffman tables of Annex K.3 (DC) and K.5 (AC): luminance, chrominance.
var (
	dcLuma   = huffSpec{[16]uint8{0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0}, []uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}
	dcChroma = huffSpec{[16]uint8{0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0}, []uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}
	acLuma   = huffSpec{[16]uint8{0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d}, []uint8{
		0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
		0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0,
		0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28,
		0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
		0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
		0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
		0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
		0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5,
		0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2,
		0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
		0xf9, 0xfa,
	}}
	acChroma = huffSpec{[16]uint8{0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77}, []uint8{
		0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71,
		0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0,
		0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26,
		0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
		0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
		0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
		0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5,
		0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3,
		0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda,
		0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
		0xf9, 0xfa,
	}}
)

// huffCode is the code of one symbol: its bits and length.
type huffCode struct {
	code uint32
	size uint8
}

// codes builds the canonical codes of a table (Annex C), by symbol.
func (h huffSpec) codes() [256]huffCode {
	var out [256]huffCode
	code, k := uint32(0), 0
	for l := 1; l <= 16; l++ {
		for i := 0; i < int(h.counts[l-1]); i++ {
			out[h.values[k]] = huffCode{code, uint8(l)}
			code++
			k++
		}
		code <<= 1
	}
	return out
}

var (
	dcCodes = [2][256]huffCode{dcLuma.codes(), dcChroma.codes()}
	acCodes = [2][256]huffCode{acLuma.codes(), acChroma.codes()}
)

// dctCos[u][x] is c(u)/2 * cos((2x+1)u*pi/16) in 1/8192 (c(0) = 1/sqrt 2),
// so that the 2-D DCT of T.81 A.3.3 is C * f * C^T.
var dctCos = [8][8]int64{
	{2896, 2896, 2896, 2896, 2896, 2896, 2896, 2896},
	{4017, 3406, 2276, 799, -799, -2276, -3406, -4017},
	{3784, 1567, -1567, -3784, -3784, -1567, 1567, 3784},
	{3406, -799, -4017, -2276, 2276, 4017, 799, -3406},
	{2896, -2896, -2896, 2896, 2896, -2896, -2896, 2896},
	{2276, -4017, 799, 3406, -3406, -799, 4017, -2276},
	{1567, -3784, 3784, -1567, -1567, 3784, -3784, 1567},
	{799, -2276, 3406, -4017, 4017, -3406, 2276, -799},
}

// jpegWriter holds the encoder state.
type jpegWriter struct {
	out   []byte
	acc   uint64
	n     uint
	quant [2][64]int32 // natural order
	prev  [3]int32     // DC predictors
}

// bitsOut writes the size low bits of v, stuffing a zero after every 0xFF.
func (w *jpegWriter) bitsOut(v uint32, size uint8) {
	w.acc = w.acc<<size | uint64(v)&(1<<size-1)
	w.n += uint(size)
	for w.n >= 8 {
		w.n -= 8
		b := byte(w.acc >> w.n)
		w.out = append(w.out, b)
		if b == 0xFF {
			w.out = append(w.out, 0)
		}
	}
}

func (w *jpegWriter) huff(c huffCode) { w.bitsOut(c.code, c.size) }

// magnitude returns the category of a coefficient and its extra bits.
func magnitude(v int32) (uint8, uint32) {
	a := v
	if a < 0 {
		a = -a
		v--
	}
	n := uint8(bits.Len32(uint32(a)))
	return n, uint32(v) & (1<<n - 1)
}

// dc writes the DC coefficient of a block of component comp (0 Y, 1 Cb, 2 Cr).
func (w *jpegWriter) dc(comp int, dc int32) {
	t := min(comp, 1)
	cat, extra := magnitude(dc - w.prev[comp])
	w.prev[comp] = dc
	w.huff(dcCodes[t][cat])
	w.bitsOut(extra, cat)
}

// flat writes a block of 64 equal samples: its DC coefficient only.
func (w *jpegWriter) flat(comp int, sample uint8) {
	q := w.quant[min(comp, 1)][0]
	dc := 8 * (int32(sample) - 128) // F(0,0) of a flat block
	w.dc(comp, roundDiv(dc, q))
	w.huff(acCodes[min(comp, 1)][0x00]) // end of block
}

// roundDiv divides rounding half away from zero.
func roundDiv(a, b int32) int32 {
	if a < 0 {
		return -((-a + b/2) / b)
	}
	return (a + b/2) / b
}

// full transforms, quantises and writes a block of samples. The separable
// integer DCT skips the work constant rows and columns do not need (the
// rows of dctCos but the first sum to zero): blocks on a gradient band
// edge cost an eighth of a full transform.
func (w *jpegWriter) full(comp int, blk *[64]uint8) {
	t := min(comp, 1)
	var tmp [64]int64 // rows transformed: tmp[y*8+u]
	for y := 0; y < 8; y++ {
		row := blk[y*8 : y*8+8]
		flat := true
		for _, p := range row[1:] {
			flat = flat && p == row[0]
		}
		if flat {
			tmp[y*8] = 2896 * 8 * (int64(row[0]) - 128)
			continue
		}
		if y > 0 && [8]uint8(row) == [8]uint8(blk[y*8-8:y*8]) {
			copy(tmp[y*8:y*8+8], tmp[y*8-8:y*8])
			continue
		}
		for u := 0; u < 8; u++ {
			var s int64
			for x, p := range row {
				s += dctCos[u][x] * (int64(p) - 128)
			}
			tmp[y*8+u] = s
		}
	}
	var f [64]int64 // coefficients, natural order, scaled by 2^26
	for u := 0; u < 8; u++ {
		c0, same := tmp[u], true
		for y := 1; y < 8 && same; y++ {
			same = tmp[y*8+u] == c0
		}
		if same {
			f[u] = 2896 * 8 * c0
			continue
		}
		for v := 0; v < 8; v++ {
			var s int64
			for y := 0; y < 8; y++ {
				s += dctCos[v][y] * tmp[y*8+u]
			}
			f[v*8+u] = s
		}
	}
	var coef [64]int32 // quantised, zig-zag order
	for k := 0; k < 64; k++ {
		pos := zigzag[k]
		s := f[pos]
		if s == 0 {
			continue
		}
		d := int64(w.quant[t][pos]) << 26
		if s < 0 {
			coef[k] = -int32((-s + d/2) / d)
		} else {
			coef[k] = int32((s + d/2) / d)
		}
	}
	w.dc(comp, coef[0])
	run := 0
	for k := 1; k < 64; k++ {
		if coef[k] == 0 {
			run++
			continue
		}
		for run > 15 {
			w.huff(acCodes[t][0xF0]) // sixteen zeros
			run -= 16
		}
		cat, extra := magnitude(coef[k])
		w.huff(acCodes[t][uint8(run<<4)|cat])
		w.bitsOut(extra, cat)
		run = 0
	}
	if run > 0 {
		w.huff(acCodes[t][0x00])
	}
}

// segment appends a marker segment.
func (w *jpegWriter) segment(marker byte, payload []byte) {
	w.out = append(w.out, 0xFF, marker)
	w.out = binary.BigEndian.AppendUint16(w.out, uint16(len(payload)+2))
	w.out = append(w.out, payload...)
}

// encodeJPEG writes the paletted picture as a baseline 4:2:0 JPEG.
func encodeJPEG(img *image.Paletted, palette []rgb, quality int) []byte {
	b := img.Bounds()
	width, height := b.Dx(), b.Dy()
	var ys, cbs, crs [256]uint8
	for i, c := range palette {
		ys[i], cbs[i], crs[i] = ycc(c)
	}
	w := &jpegWriter{out: make([]byte, 0, width*height/16+1024)}
	scale := int32(200 - 2*quality) // T.81 / IJG quality scaling, for quality >= 50
	if quality < 50 {
		scale = int32(5000 / quality)
	}
	var dqt []byte
	for t := 0; t < 2; t++ {
		dqt = append(dqt, byte(t))
		for k := 0; k < 64; k++ {
			q := min(max((baseQuant[t][zigzag[k]]*scale+50)/100, 1), 255)
			w.quant[t][zigzag[k]] = q
			dqt = append(dqt, byte(q))
		}
	}

	w.out = append(w.out, 0xFF, 0xD8) // SOI
	w.segment(0xE0, []byte{'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0})
	w.segment(0xDB, dqt)
	w.segment(0xC0, []byte{8, byte(height >> 8), byte(height), byte(width >> 8), byte(width), 3,
		1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1})
	var dht []byte
	for _, h := range []struct {
		class byte
		spec  huffSpec
	}{{0x00, dcLuma}, {0x10, acLuma}, {0x01, dcChroma}, {0x11, acChroma}} {
		dht = append(dht, h.class)
		dht = append(dht, h.spec.counts[:]...)
		dht = append(dht, h.spec.values...)
	}
	w.segment(0xC4, dht)
	w.segment(0xDA, []byte{3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0})

	pix, stride := img.Pix, img.Stride
	at := func(x, y int) uint8 { return pix[min(y, height-1)*stride+min(x, width-1)] }
	var blk [64]uint8
	for my := 0; my < height; my += 16 {
		for mx := 0; mx < width; mx += 16 {
			// Four luminance blocks.
			first := at(mx, my)
			allSame := true
			for _, o := range [4][2]int{{0, 0}, {8, 0}, {0, 8}, {8, 8}} {
				x0, y0 := mx+o[0], my+o[1]
				p, same := at(x0, y0), true
				if x0+8 <= width && y0+8 <= height {
					for y := 0; y < 8 && same; y++ {
						row := pix[(y0+y)*stride+x0 : (y0+y)*stride+x0+8]
						same = binary.LittleEndian.Uint64(row) == uint64(p)*0x0101010101010101
					}
				} else {
					for y := 0; y < 8 && same; y++ {
						for x := 0; x < 8; x++ {
							if at(x0+x, y0+y) != p {
								same = false
								break
							}
						}
					}
				}
				allSame = allSame && same && p == first
				if same {
					w.flat(0, ys[p])
					continue
				}
				for y := 0; y < 8; y++ {
					for x := 0; x < 8; x++ {
						blk[y*8+x] = ys[at(x0+x, y0+y)]
					}
				}
				w.full(0, &blk)
			}
			// The chrominance blocks average each 2x2 pixels.
			if allSame {
				w.flat(1, cbs[first])
				w.flat(2, crs[first])
				continue
			}
			var cb, cr [64]uint8
			cbSame, crSame := true, true
			for y := 0; y < 8; y++ {
				for x := 0; x < 8; x++ {
					px, py := mx+2*x, my+2*y
					a, b, c, d := at(px, py), at(px+1, py), at(px, py+1), at(px+1, py+1)
					i := y*8 + x
					cb[i] = uint8((int(cbs[a]) + int(cbs[b]) + int(cbs[c]) + int(cbs[d]) + 2) / 4)
					cr[i] = uint8((int(crs[a]) + int(crs[b]) + int(crs[c]) + int(crs[d]) + 2) / 4)
					cbSame = cbSame && cb[i] == cb[0]
					crSame = crSame && cr[i] == cr[0]
				}
			}
			if cbSame {
				w.flat(1, cb[0])
			} else {
				w.full(1, &cb)
			}
			if crSame {
				w.flat(2, cr[0])
			} else {
				w.full(2, &cr)
			}
		}
	}
	if w.n > 0 {
		w.bitsOut(0xFF, uint8(8-w.n)) // pad with ones
	}
	w.out = append(w.out, 0xFF, 0xD9) // EOI
	return w.out
}
