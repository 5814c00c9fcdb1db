package media

import (
	"fmt"
	"image"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Label says what a file is: it is drawn on images and video frames, and
// written in the names of a GLB and the INFO chunk of a WAV. The zero Label
// draws nothing.
type Label struct {
	ID    string // the owner, such as "asset 61"
	Model string // the model that made it, such as "flux-2-pro"
	Text  string // the prompt; its start is shown, wrapped and trimmed
}

func (l Label) empty() bool { return l.ID == "" && l.Model == "" && l.Text == "" }

// title is the first line of the label: the id and the model.
func (l Label) title() string {
	return strings.TrimSpace(l.ID + "  " + l.Model)
}

// String is the label on one line, for the names of a GLB and WAV tags.
func (l Label) String() string {
	parts := make([]string, 0, 3)
	for _, p := range []string{l.ID, l.Model, l.Text} {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " | ")
}

// The label is drawn as an opaque bar across the bottom of the picture:
// light text on a dark background, so that it reads the same over any
// scene (and so that the video encoder can code its macroblocks apart from
// the moving scene). Text is drawn with the Go fonts; its coverage is
// quantised to 16 levels (0 background .. 15 text), which keeps images
// paletted and makes the output insensitive to the last bits of the
// rasteriser's float32 arithmetic.
var (
	labelBG = rgb{18, 20, 26}
	labelFG = rgb{246, 246, 240}
)

const labelLevels = 16

// levelColour is the colour of coverage level k.
func levelColour(k int) rgb { return lerp(labelBG, labelFG, k, labelLevels-1) }

// fonts are the parsed Go fonts: regular and bold.
var fonts = sync.OnceValues(func() ([2]*opentype.Font, error) {
	var out [2]*opentype.Font
	for i, ttf := range [][]byte{goregular.TTF, gobold.TTF} {
		f, err := opentype.Parse(ttf)
		if err != nil {
			return out, fmt.Errorf("media: parsing the Go fonts: %w", err)
		}
		out[i] = f
	}
	return out, nil
})

// glyph is a rasterised glyph: coverage levels, placed relative to the dot.
type glyph struct {
	levels  []uint8 // 0..15, row by row
	rect    image.Rectangle
	advance int // pixels, rounded
}

// faceKey names a face: the font and the pixel size.
type faceKey struct {
	bold bool
	size int
}

// fontFace is a face of one font and pixel size with its glyph cache. A
// face (and its cache) is kept per size for the life of the process, as the
// same sizes come back for the same resolutions; at most maxFaces are kept.
type fontFace struct {
	mu     sync.Mutex
	face   font.Face
	glyphs map[rune]*glyph
	ascent int
	height int
}

const maxFaces = 64

var (
	facesMu sync.Mutex
	faces   = map[faceKey]*fontFace{}
)

// faceOf returns the face of the bold or regular font at size pixels.
func faceOf(bold bool, size int) (*fontFace, error) {
	k := faceKey{bold: bold, size: size}
	facesMu.Lock()
	defer facesMu.Unlock()
	if f, ok := faces[k]; ok {
		return f, nil
	}
	fs, err := fonts()
	if err != nil {
		return nil, err
	}
	which := fs[0]
	if bold {
		which = fs[1]
	}
	face, err := opentype.NewFace(which, &opentype.FaceOptions{Size: float64(size), DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		return nil, fmt.Errorf("media: a %d px face: %w", size, err)
	}
	if len(faces) >= maxFaces {
		clear(faces)
	}
	m := face.Metrics()
	f := &fontFace{face: face, glyphs: map[rune]*glyph{}, ascent: m.Ascent.Ceil(), height: m.Height.Ceil()}
	faces[k] = f
	return f, nil
}

// glyph returns the rasterised glyph of r (the face's mask is copied and
// quantised; the face's own buffer is reused by its next call).
func (f *fontFace) glyph(r rune) *glyph {
	f.mu.Lock()
	defer f.mu.Unlock()
	if g, ok := f.glyphs[r]; ok {
		return g
	}
	dr, mask, mp, adv, ok := f.face.Glyph(fixed.Point26_6{}, r)
	if !ok {
		dr, mask, mp, adv, _ = f.face.Glyph(fixed.Point26_6{}, '?')
	}
	g := &glyph{rect: dr, advance: adv.Round()}
	if a, isAlpha := mask.(*image.Alpha); isAlpha && !dr.Empty() {
		g.levels = make([]uint8, dr.Dx()*dr.Dy())
		for y := 0; y < dr.Dy(); y++ {
			row := a.Pix[(mp.Y+y-a.Rect.Min.Y)*a.Stride+(mp.X-a.Rect.Min.X):]
			for x := 0; x < dr.Dx(); x++ {
				g.levels[y*dr.Dx()+x] = row[x] >> 4
			}
		}
	} else {
		g.rect = image.Rectangle{}
	}
	f.glyphs[r] = g
	return g
}

// width is the advance of s in pixels.
func (f *fontFace) width(s string) int {
	w := 0
	for _, r := range s {
		w += f.glyph(r).advance
	}
	return w
}

// levelMask is a rectangle of coverage levels.
type levelMask struct {
	w, h int
	pix  []uint8
	// ink, when not nil, marks the 16x16 cells (macroblocks) that glyphs
	// were drawn in, w/16 a row.
	ink []bool
}

// draw writes s with its baseline at (x, y), keeping the higher level where
// glyphs overlap, clipped to the mask; it returns the x after the text.
func (m *levelMask) draw(f *fontFace, x, y int, s string) int {
	for _, r := range s {
		g := f.glyph(r)
		m.drawGlyph(g, x, y)
		x += g.advance
	}
	return x
}

// drawGlyph draws g with its origin at (x, y), see draw.
func (m *levelMask) drawGlyph(g *glyph, x, y int) {
	gw := g.rect.Dx()
	// The part of the glyph inside the mask.
	r := g.rect.Add(image.Pt(x, y)).Intersect(image.Rect(0, 0, m.w, m.h))
	if r.Empty() {
		return
	}
	for py := r.Min.Y; py < r.Max.Y; py++ {
		j := py - y - g.rect.Min.Y
		src := g.levels[j*gw+r.Min.X-x-g.rect.Min.X : j*gw+r.Max.X-x-g.rect.Min.X]
		row := m.pix[py*m.w+r.Min.X : py*m.w+r.Max.X]
		for i, v := range src {
			if v > row[i] {
				row[i] = v
			}
		}
	}
	if m.ink != nil {
		cw := m.w / 16
		for cy := r.Min.Y / 16; cy <= (r.Max.Y-1)/16; cy++ {
			for cx := r.Min.X / 16; cx <= (r.Max.X-1)/16; cx++ {
				m.ink[cy*cw+cx] = true
			}
		}
	}
}

// clearRect sets a rectangle of the mask to the background.
func (m *levelMask) clearRect(r image.Rectangle) {
	r = r.Intersect(image.Rect(0, 0, m.w, m.h))
	for y := r.Min.Y; y < r.Max.Y; y++ {
		clear(m.pix[y*m.w+r.Min.X : y*m.w+r.Max.X])
	}
}

// labelLayout is a label set out for a picture size: the bar and where
// its dynamic part (the video timecode) goes.
type labelLayout struct {
	mask     levelMask // the bar, text drawn, timecode field empty
	title    *fontFace
	body     *fontFace
	timecode image.Rectangle // in the mask; empty for still images
	tcX, tcY int             // where the timecode text starts (baseline)
	tc       string          // the timecode drawn
	tcPos    []int           // x of each byte of tc (ASCII)
	tcGlyphs [128]*glyph     // the body face's glyphs of ASCII, as used
}

// ascii returns the body glyph of an ASCII byte without locking the face.
func (lay *labelLayout) ascii(c byte) *glyph {
	g := lay.tcGlyphs[c&127]
	if g == nil {
		g = lay.body.glyph(rune(c & 127))
		lay.tcGlyphs[c&127] = g
	}
	return g
}

// labelStyle sets the size of a label: its title and body font sizes are
// the picture's shorter side (longer side, with byLong) divided by
// titleDiv and bodyDiv, and at most promptLines lines of the prompt are
// shown.
type labelStyle struct {
	titleDiv, bodyDiv, promptLines int
	byLong                         bool
}

// stillLabel is the label of images: large enough to read when the
// picture is shown a fifth of its size (a thumbnail).
var stillLabel = labelStyle{titleDiv: 15, bodyDiv: 22, promptLines: 2}

// posterLabel is the label of video posters, which thumbnails show whole
// (letterboxed): sized by the longer side, with one line of the prompt.
var posterLabel = labelStyle{titleDiv: 17, bodyDiv: 27, promptLines: 1, byLong: true}

// videoFrameLabel is the label of video frames: smaller, as every text
// macroblock is coded raw (I_PCM) in every key frame; it reads when the
// video plays at half its size.
var videoFrameLabel = labelStyle{titleDiv: 22, bodyDiv: 32, promptLines: 2}

// layoutLabel draws the label of a w x h picture into a bar as wide as
// the picture (or width, if larger: video pictures are coded in whole
// macroblocks). info is the second line (size, type); timecode reserves
// room on that line, at its right, for a timecode as wide as sample.
// align, when above 1, makes the bar start and end on multiples of it (a
// macroblock row): the bar then reaches below h, to the coded height.
func layoutLabel(l Label, st labelStyle, w, h, width int, info, sample string, align int) (*labelLayout, error) {
	short := min(w, h)
	if st.byLong {
		short = max(w, h)
	}
	ts, bs := max(8, short/st.titleDiv), max(7, short/st.bodyDiv)
	title, err := faceOf(true, ts)
	if err != nil {
		return nil, err
	}
	body, err := faceOf(false, bs)
	if err != nil {
		return nil, err
	}
	pad := max(2, bs/2)
	textW := w - 2*pad
	lines := wrapText(body, strings.Join(strings.Fields(l.Text), " "), textW, st.promptLines)
	barH := pad + title.height + body.height*(1+len(lines)) + pad/2
	top := max(0, h-barH)
	if align > 1 {
		top -= top % align
	}
	lay := &labelLayout{title: title, body: body}
	lay.mask = levelMask{w: width, h: h - top}
	if align > 1 {
		lay.mask.h = (h+align-1)/align*align - top
	}
	lay.mask.pix = make([]uint8, lay.mask.w*lay.mask.h)
	if align == 16 {
		lay.mask.ink = make([]bool, (lay.mask.w/16)*(lay.mask.h/16))
	}
	// Text sits at the bottom of the bar (the extra rows of an aligned bar
	// go above it).
	y := h - top - barH + pad + title.ascent
	lay.mask.draw(title, pad, y, ellipsize(title, l.title(), textW))
	y += body.height
	x := lay.mask.draw(body, pad, y, info)
	if sample != "" {
		tw := body.width(sample)
		lay.tcX = max(x+body.height, w-pad-tw)
		lay.tcY = y
		lay.timecode = image.Rect(lay.tcX, y-body.ascent, lay.tcX+tw+body.height/2, y-body.ascent+body.height)
	}
	for _, line := range lines {
		y += body.height
		lay.mask.draw(body, pad, y, line)
	}
	return lay, nil
}

// drawTimecode draws the timecode of a frame in its field, from the glyphs
// the face caches (digits and a few signs). Only the characters that
// changed since the last call are redrawn (usually two digits); dirty
// receives the x ranges of the mask that may have changed.
func (lay *labelLayout) drawTimecode(tc string, dirty func(x0, x1 int)) {
	pos := make([]int, len(tc)+1)
	x := lay.tcX
	for i := 0; i < len(tc); i++ {
		pos[i] = x
		x += lay.ascii(tc[i]).advance
	}
	pos[len(tc)] = x
	same := len(pos) == len(lay.tcPos)
	for i := 0; same && i < len(pos); i++ {
		same = pos[i] == lay.tcPos[i]
	}
	if !same {
		lay.mask.clearRect(lay.timecode)
		lay.mask.draw(lay.body, lay.tcX, lay.tcY, tc)
		dirty(lay.timecode.Min.X, lay.timecode.Max.X)
	} else {
		r := lay.timecode
		for i := 0; i < len(tc); i++ {
			if tc[i] == lay.tc[i] {
				continue
			}
			lay.mask.clearRect(image.Rect(pos[i], r.Min.Y, pos[i+1], r.Max.Y))
			g := lay.ascii(tc[i])
			dirty(min(pos[i], pos[i]+g.rect.Min.X), max(pos[i+1], pos[i]+g.rect.Max.X))
			lay.mask.drawGlyph(g, pos[i], lay.tcY)
			// Neighbours that reach into the cleared cell are redrawn.
			if i > 0 && lay.ascii(tc[i-1]).rect.Max.X > pos[i]-pos[i-1] {
				lay.mask.drawGlyph(lay.ascii(tc[i-1]), pos[i-1], lay.tcY)
			}
			if i+1 < len(tc) && lay.ascii(tc[i+1]).rect.Min.X < 0 {
				lay.mask.drawGlyph(lay.ascii(tc[i+1]), pos[i+1], lay.tcY)
			}
		}
	}
	lay.tc, lay.tcPos = tc, pos
}

// timecode is the time and number of a frame: "00:03.4  frame 34".
func timecode(frame, fps int) string {
	tenths := frame * 10 / fps
	b := make([]byte, 0, 24)
	b = append(b, byte('0'+tenths/6000%10), byte('0'+tenths/600%10), ':', byte('0'+tenths/100%6), byte('0'+tenths/10%10), '.', byte('0'+tenths%10))
	b = append(b, "  frame "...)
	return string(strconv.AppendInt(b, int64(frame), 10))
}

// wrapText breaks s into at most n lines of at most width pixels, at
// spaces where it can; the last line ends with an ellipsis when text is
// left over.
func wrapText(f *fontFace, s string, width, n int) []string {
	var lines []string
	for s != "" && len(lines) < n {
		if f.width(s) <= width {
			lines = append(lines, s)
			s = ""
			break
		}
		// The longest prefix that fits, cut at a space when there is one.
		cut, w := 0, 0
		for i, r := range s {
			w += f.glyph(r).advance
			if w > width {
				break
			}
			cut = i + utf8.RuneLen(r)
		}
		if sp := strings.LastIndexByte(s[:cut], ' '); sp > 0 {
			cut = sp
		}
		if cut == 0 {
			break
		}
		lines = append(lines, strings.TrimSpace(s[:cut]))
		s = strings.TrimSpace(s[cut:])
	}
	if s != "" && len(lines) > 0 {
		lines[len(lines)-1] = ellipsize(f, lines[len(lines)-1]+" …", width)
	}
	return lines
}

// ellipsize trims s to width pixels, ending it with an ellipsis if cut.
func ellipsize(f *fontFace, s string, width int) string {
	if f.width(s) <= width {
		return s
	}
	w := f.glyph('…').advance
	for i, r := range s {
		w += f.glyph(r).advance
		if w > width {
			return strings.TrimSpace(s[:i]) + "…"
		}
	}
	return s
}
