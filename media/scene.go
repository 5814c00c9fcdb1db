package media

// A scene is the picture behind images and videos: a banded two-colour
// gradient and a few flat shapes, all derived from the seed and the prompt.
// It is resolution independent: positions are fractions of the canvas (in
// 1/65536) and sizes fractions of its shorter side, and it is rasterised
// span by span, in integers, at any size and cell granularity (1 pixel for
// images, one 16x16 macroblock for video).
type scene struct {
	palette  []rgb // gradient bands first, then one entry per shape
	bands    int
	vertical bool // the gradient runs from top to bottom (else left to right)
	shapes   []shape
}

type shapeKind int

const (
	shapeCircle shapeKind = iota
	shapeRing
	shapeRect
	shapeDiamond
	shapeTriangle
	shapeBars
	numShapeKinds
)

// one is 1.0 in the 1/65536 fixed point of scene coordinates.
const one = 1 << 16

type shape struct {
	kind   shapeKind
	cx, cy int64 // centre, fraction of width and height
	rx, ry int64 // half sizes, fraction of the shorter side
	vx, vy int64 // speed per second, fraction of width and height (video)
	color  uint8 // palette index
}

// newScene derives the scene of a seed and prompt.
func newScene(seed uint64, prompt string) *scene {
	r := newRNG(seed, prompt, "scene")
	s := &scene{bands: r.between(24, 48), vertical: r.intn(3) != 0}
	hue := r.intn(360)
	from := hsv(hue, r.between(110, 230), r.between(40, 120))
	to := hsv(hue+r.between(40, 160), r.between(90, 220), r.between(170, 255))
	if r.intn(2) == 0 {
		from, to = to, from
	}
	for i := 0; i < s.bands; i++ {
		s.palette = append(s.palette, lerp(from, to, i, s.bands-1))
	}
	n := r.between(3, 6)
	moving := r.between(1, 2)
	for i := 0; i < n; i++ {
		sh := shape{
			kind: shapeKind(r.intn(int(numShapeKinds))),
			cx:   int64(r.between(one/10, one*9/10)),
			cy:   int64(r.between(one/10, one*9/10)),
			rx:   int64(r.between(one/16, one/4)),
		}
		sh.ry = sh.rx
		if sh.kind == shapeRect || sh.kind == shapeDiamond || sh.kind == shapeBars || sh.kind == shapeTriangle {
			sh.ry = int64(r.between(one/16, one/4))
		}
		if i >= n-moving {
			sh.vx = int64(r.between(one/30, one/12))
			sh.vy = int64(r.between(one/50, one/16))
			if r.intn(2) == 0 {
				sh.vx = -sh.vx
			}
			if r.intn(2) == 0 {
				sh.vy = -sh.vy
			}
		}
		sh.color = uint8(len(s.palette))
		s.palette = append(s.palette, hsv(hue+180+r.between(-100, 100), r.between(150, 255), r.between(170, 255)))
		s.shapes = append(s.shapes, sh)
	}
	return s
}

// moves reports whether some shape of the scene moves over time.
func (s *scene) moves() bool {
	for _, sh := range s.shapes {
		if sh.vx != 0 || sh.vy != 0 {
			return true
		}
	}
	return false
}

// bounce folds a position that moved out of [0, one] back into it, as a
// ball bouncing between two walls.
func bounce(p int64) int64 {
	p %= 2 * one
	if p < 0 {
		p += 2 * one
	}
	if p > one {
		p = 2*one - p
	}
	return p
}

// span is a half-open run [a, b) of pixels on one row.
type span struct{ a, b int64 }

// geometry is a shape placed on a canvas, in pixels.
type geometry struct {
	kind           shapeKind
	cx, cy, rx, ry int64
	color          uint8
}

func (sh shape) place(w, h, frame, fps int) geometry {
	cx, cy := sh.cx, sh.cy
	if fps > 0 && frame > 0 {
		cx = bounce(cx + sh.vx*int64(frame)/int64(fps))
		cy = bounce(cy + sh.vy*int64(frame)/int64(fps))
	}
	short := int64(min(w, h))
	g := geometry{
		kind:  sh.kind,
		cx:    cx * int64(w) >> 16,
		cy:    cy * int64(h) >> 16,
		rx:    max(1, sh.rx*short>>16),
		ry:    max(1, sh.ry*short>>16),
		color: sh.color,
	}
	return g
}

// spans returns the runs of the shape on pixel row y (at most two).
func (g geometry) spans(y int64, buf *[2]span) []span {
	out := buf[:0]
	dy := y - g.cy
	ady := dy
	if ady < 0 {
		ady = -ady
	}
	switch g.kind {
	case shapeCircle, shapeRing:
		r := g.rx
		if ady > r {
			return out
		}
		dx := isqrt(r*r - dy*dy)
		if g.kind == shapeRing {
			ri := r * 5 / 8
			if ady <= ri {
				dxi := isqrt(ri*ri - dy*dy)
				return append(out, span{g.cx - dx, g.cx - dxi}, span{g.cx + dxi + 1, g.cx + dx + 1})
			}
		}
		return append(out, span{g.cx - dx, g.cx + dx + 1})
	case shapeRect:
		if dy < -g.ry || dy >= g.ry {
			return out
		}
		return append(out, span{g.cx - g.rx, g.cx + g.rx})
	case shapeDiamond:
		if ady > g.ry {
			return out
		}
		dx := g.rx * (g.ry - ady) / g.ry
		return append(out, span{g.cx - dx, g.cx + dx + 1})
	case shapeTriangle:
		top := g.cy - g.ry
		if y < top || y > g.cy+g.ry {
			return out
		}
		dx := g.rx * (y - top) / (2 * g.ry)
		return append(out, span{g.cx - dx, g.cx + dx + 1})
	case shapeBars:
		if dy < -g.ry || dy >= g.ry {
			return out
		}
		// Nine stripes, the odd ones see-through: five bars.
		if ((y-(g.cy-g.ry))*9/(2*g.ry))%2 != 0 {
			return out
		}
		return append(out, span{g.cx - g.rx, g.cx + g.rx})
	}
	return out
}

// ceilDiv divides rounding up, for any sign of a and a positive b.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a > 0 {
		q++
	}
	return q
}

// render rasterises the scene for a w x h pixel canvas into dst, a gw x gh
// grid of palette indices in which cell (i, j) is the colour at the pixel
// centre (i*cell + cell/2, j*cell + cell/2). frame and fps place the moving
// shapes; frame 0 is the still picture. colBand is scratch space of gw
// entries (or nil).
func (s *scene) render(dst []uint8, gw, gh, w, h, cell, frame, fps int, colBand []uint8) {
	half := int64(cell / 2)
	c := int64(cell)
	bands := int64(s.bands)
	if !s.vertical {
		if len(colBand) < gw {
			colBand = make([]uint8, gw)
		}
		for i := 0; i < gw; i++ {
			x := min(int64(i)*c+half, int64(w)-1)
			colBand[i] = uint8(min(bands-1, x*bands/int64(w)))
		}
	}
	geo := make([]geometry, len(s.shapes))
	for i, sh := range s.shapes {
		geo[i] = sh.place(w, h, frame, fps)
	}
	var buf [2]span
	for j := 0; j < gh; j++ {
		row := dst[j*gw : (j+1)*gw]
		y := int64(j)*c + half
		if s.vertical {
			band := uint8(min(bands-1, min(y, int64(h)-1)*bands/int64(h)))
			for i := range row {
				row[i] = band
			}
		} else {
			copy(row, colBand[:gw])
		}
		for _, g := range geo {
			for _, sp := range g.spans(y, &buf) {
				a := max(0, ceilDiv(sp.a-half, c))
				b := min(int64(gw), ceilDiv(sp.b-half, c))
				for i := a; i < b; i++ {
					row[i] = g.color
				}
			}
		}
	}
}
