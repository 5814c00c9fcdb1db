package media

import (
	"encoding/binary"
	"fmt"
	"image"
)

const (
	// videoFPS is the frame rate of generated videos: low, as the pictures
	// move by whole macroblocks, and it keeps the files small.
	videoFPS = 10
	// videoTimescale is the MP4 media timescale of the video track.
	videoTimescale = 12800
	// keySeconds is the usual distance between key frames (IDR), the
	// common streaming GOP: a key frame costs about one byte a macroblock
	// (8 kB at 1080p), a frame that only moves shapes much less.
	keySeconds = 2
	// labelKeySeconds is the distance between key frames of a labelled
	// video: every key frame codes the label's text macroblocks raw (about
	// 150 kB at 1080p), so they come as far apart as x264's default (250
	// frames at 25 fps). Seeking decodes from the key frame before, which
	// is cheap: the frames between skip almost every macroblock.
	labelKeySeconds = 10
	// keyFrameBudget bounds the macroblocks all key frames of a video
	// hold together: beyond it (huge or very long videos) key frames come
	// less often than every keySeconds.
	keyFrameBudget = 2_000_000
	// animationBudget bounds the macroblocks compared over all frames:
	// beyond it (huge or very long videos) the picture does not move.
	animationBudget = 100_000_000

	aacRate        = 48000 // Hz
	aacFrame       = 1024  // samples per AAC frame
	aacChannels    = 1
	aacTimescale   = aacRate
	aacSilentBytes = 4
)

// silentAACFrame is a raw AAC-LC frame of silence: a single channel element
// (SCE, tag 0) with global_gain 0, a long window with no scale factor bands,
// no pulse, TNS or gain control data, then the END element.
var silentAACFrame = []byte{0x00, 0x00, 0x00, 0x07}

// aacConfig is the AudioSpecificConfig: AAC-LC, 48 kHz, mono.
var aacConfig = []byte{0x11, 0x88}

// keyInterval returns the distance between IDR frames, in frames, with
// key frames every every seconds or further apart.
func keyInterval(mbs, seconds, every int) int {
	sec := max(every, (seconds*mbs+keyFrameBudget-1)/keyFrameBudget)
	return sec * videoFPS
}

// generateVideo encodes the scene of s as an H.264 MP4.
func generateVideo(s Spec) ([]byte, error) {
	p := newH264Params(s.Width, s.Height, videoFPS)
	sc := newScene(s.Seed, s.Prompt)
	pc := &picture{p: p, colours: make([]yuv, len(sc.palette), len(sc.palette)+1)}
	for i, c := range sc.palette {
		pc.colours[i] = rgbToYUV(c)
	}
	var ov *videoLabel
	if !s.Label.empty() {
		var err error
		if ov, err = newVideoLabel(s, p, pc); err != nil {
			return nil, err
		}
	}
	mbs := p.mbW * p.mbH
	frames := s.DurationSeconds * videoFPS
	keyEvery := keyInterval(mbs, s.DurationSeconds, keySeconds)
	if ov != nil {
		keyEvery = keyInterval(mbs, s.DurationSeconds, labelKeySeconds)
	}
	animate := sc.moves() && mbs*frames <= animationBudget

	grid := make([]uint8, mbs)
	prev := make([]uint8, mbs)
	colBand := make([]uint8, p.mbW)
	// The label's bar hides the rows under it: they are painted once and
	// the scene is drawn above it only.
	rows := p.mbH
	if ov != nil {
		rows = ov.top
		ov.cover(grid)
		ov.cover(prev)
	}
	sc.render(grid, p.mbW, rows, s.Width, s.Height, 16, 0, videoFPS, colBand)

	video := &mp4Track{
		id:          1,
		handler:     "vide",
		name:        "VideoHandler",
		timescale:   videoTimescale,
		width:       s.Width,
		height:      s.Height,
		sampleEntry: avc1Entry(s.Width, s.Height, p.sps(), p.pps()),
		chunkOf:     func(i int) int { return i / videoFPS },
	}
	lastIDR, idrs := 0, 0
	for f := 0; f < frames; f++ {
		if animate && f > 0 {
			grid, prev = prev, grid
			sc.render(grid, p.mbW, rows, s.Width, s.Height, 16, f, videoFPS, colBand)
		}
		ov.frame(pc, f)
		var rbsp []byte
		if f%keyEvery == 0 {
			rbsp = pc.idrRBSP(grid, idrs%65536)
			lastIDR = f
			idrs++
			video.sync = append(video.sync, uint32(f+1))
		} else {
			ref := prev
			if !animate {
				ref = nil // the scene does not move: only the timecode may change
			}
			rbsp = pc.pRBSP(grid, ref, (f-lastIDR)%(1<<log2MaxFrame))
		}
		// The sample is the NAL unit after its length.
		refIdc, typ := 2, nalSlice
		if f == lastIDR {
			refIdc, typ = 3, nalIDR
		}
		sample := appendNAL(make([]byte, 4, 4+1+len(rbsp)+len(rbsp)/64+2), refIdc, typ, rbsp)
		binary.BigEndian.PutUint32(sample, uint32(len(sample)-4))
		video.samples = append(video.samples, sample)
		video.durations = append(video.durations, videoTimescale/videoFPS)
	}
	tracks := []*mp4Track{video}

	if s.Audio {
		total := s.DurationSeconds * aacRate
		n := (total + aacFrame - 1) / aacFrame
		audio := &mp4Track{
			id:          2,
			handler:     "soun",
			name:        "SoundHandler",
			timescale:   aacTimescale,
			sampleEntry: mp4aEntry(aacRate, aacChannels, aacConfig, uint32(aacSilentBytes*8*aacRate/aacFrame)),
			chunkOf:     func(i int) int { return i * aacFrame / aacRate },
		}
		for i := 0; i < n; i++ {
			audio.samples = append(audio.samples, silentAACFrame)
			// The last frame is cut so that the track lasts exactly the
			// requested duration.
			audio.durations = append(audio.durations, uint32(min(aacFrame, total-i*aacFrame)))
		}
		tracks = append(tracks, audio)
	}
	out, err := writeMP4(tracks, s.DurationSeconds)
	if err != nil {
		return nil, fmt.Errorf("media: writing a %dx%d %d s video: %w", s.Width, s.Height, s.DurationSeconds, err)
	}
	return out, nil
}

// videoLabel is the label of a video: an opaque bar over whole macroblock
// rows at the bottom of the picture. Its macroblocks that hold text are
// coded as I_PCM (see h264.go), the others as flat macroblocks of the
// bar's colour. The label is drawn once; each frame redraws only the
// characters of the timecode that changed (from the face's cached glyphs)
// and rebuilds only the macroblocks they touch.
type videoLabel struct {
	lay    *labelLayout
	top    int   // first macroblock row of the bar
	mbW    int   // macroblocks a row
	bg     uint8 // palette index of the bar colour
	luma   [labelLevels]uint8
	chroma [128]uint8 // the flat Cb and Cr samples of a text macroblock
	// dyn are the macroblocks the timecode touches (picture coordinates);
	// each has two payload buffers, so that a new payload is never built
	// over the one it is compared with.
	dyn      image.Rectangle
	dynTiles [2][][]byte
	dirty    []bool // macroblock columns of dyn to rebuild
}

// videoLabelInfo is the second line of a video's label.
func videoLabelInfo(s Spec) string {
	return fmt.Sprintf("%dx%d  %d s", s.Width, s.Height, s.DurationSeconds)
}

// newVideoLabel lays out the label of s and sets pc up to code it.
func newVideoLabel(s Spec, p h264Params, pc *picture) (*videoLabel, error) {
	sample := timecode(s.DurationSeconds*videoFPS-1, videoFPS)
	lay, err := layoutLabel(s.Label, videoFrameLabel, s.Width, s.Height, p.mbW*16, videoLabelInfo(s), sample, 16)
	if err != nil {
		return nil, err
	}
	bg := rgbToYUV(labelBG)
	v := &videoLabel{lay: lay, top: p.mbH - lay.mask.h/16, mbW: p.mbW, bg: uint8(len(pc.colours)), dirty: make([]bool, p.mbW)}
	pc.colours = append(pc.colours, bg)
	for k := range v.luma {
		v.luma[k] = rgbToYUV(levelColour(k)).y
	}
	for i := range 64 {
		v.chroma[i], v.chroma[64+i] = bg.u, bg.v
	}
	mbs := p.mbW * p.mbH
	pc.tile, pc.pcm = make([][]byte, mbs), make([]bool, mbs)
	r := lay.timecode
	v.dyn = image.Rect(r.Min.X/16, r.Min.Y/16+v.top, (r.Max.X+15)/16, (r.Max.Y+15)/16+v.top).Intersect(image.Rect(0, v.top, p.mbW, p.mbH))
	pc.dyn = v.dyn
	pc.prevTile = make([][]byte, v.dyn.Dx()*v.dyn.Dy())
	var store []byte // the static payloads, in one allocation
	for y := v.top; y < p.mbH; y++ {
		for x := 0; x < p.mbW; x++ {
			if (image.Point{x, y}).In(v.dyn) {
				continue
			}
			if len(store) < pcmBytes {
				store = make([]byte, pcmBytes*max(16, (p.mbH-y)*p.mbW/2))
			}
			if t := v.tile(x, y, store[:pcmBytes:pcmBytes]); t != nil {
				pc.tile[y*p.mbW+x] = t
				store = store[pcmBytes:]
			}
		}
	}
	for i := range v.dynTiles {
		v.dynTiles[i] = make([][]byte, v.dyn.Dx()*v.dyn.Dy())
	}
	// A key frame holds every text macroblock raw: the bit writer starts
	// with room for them, rather than growing to it.
	n := v.dyn.Dx() * v.dyn.Dy()
	for _, t := range pc.tile {
		if t != nil {
			n++
		}
	}
	pc.w.buf = make([]byte, 0, n*(pcmBytes+2)+mbs+1024)
	return v, nil
}

// cover paints the bar's macroblocks in the grid with the bar colour.
func (v *videoLabel) cover(grid []uint8) {
	for i := v.top * v.mbW; i < len(grid); i++ {
		grid[i] = v.bg
	}
}

// tile builds the I_PCM payload of macroblock (x, y) from the mask into
// buf (or a new slice); nil when it holds no text.
func (v *videoLabel) tile(x, y int, buf []byte) []byte {
	m := &v.lay.mask
	x0, y0 := x*16, (y-v.top)*16
	if !m.ink[(y-v.top)*(m.w/16)+x] {
		return nil
	}
	any := false
	for j := 0; j < 16 && !any; j++ {
		for _, k := range m.pix[(y0+j)*m.w+x0 : (y0+j)*m.w+x0+16] {
			any = any || k != 0
		}
	}
	if !any {
		return nil
	}
	if cap(buf) < pcmBytes {
		buf = make([]byte, pcmBytes)
	}
	buf = buf[:pcmBytes]
	for j := 0; j < 16; j++ {
		row := buf[j*16 : j*16+16]
		for i, k := range m.pix[(y0+j)*m.w+x0 : (y0+j)*m.w+x0+16] {
			row[i] = v.luma[k]
		}
	}
	copy(buf[256:], v.chroma[:])
	return buf
}

// frame draws the timecode of frame f and sets the text macroblocks of
// pc for it, keeping the previous ones for comparison.
func (v *videoLabel) frame(pc *picture, f int) {
	if v == nil {
		return
	}
	clear(v.dirty)
	first := f == 0
	v.lay.drawTimecode(timecode(f, videoFPS), func(x0, x1 int) {
		for x := max(0, x0/16); x < min(len(v.dirty), (x1+15)/16); x++ {
			v.dirty[x] = true
		}
	})
	for y := v.dyn.Min.Y; y < v.dyn.Max.Y; y++ {
		for x := v.dyn.Min.X; x < v.dyn.Max.X; x++ {
			i := y*v.mbW + x
			d := (y-v.dyn.Min.Y)*v.dyn.Dx() + x - v.dyn.Min.X
			pc.prevTile[d] = pc.tile[i]
			if !first && !v.dirty[x] {
				continue // unchanged: same payload
			}
			// Build into the buffer the previous payload is not in.
			k := 0
			if old := pc.tile[i]; old != nil && v.dynTiles[0][d] != nil && &old[0] == &v.dynTiles[0][d][0] {
				k = 1
			}
			t := v.tile(x, y, v.dynTiles[k][d])
			if t != nil {
				v.dynTiles[k][d] = t
			}
			pc.tile[i] = t
		}
	}
}
