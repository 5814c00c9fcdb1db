package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"

	"golang.org/x/image/vector"
)

// Poster returns the poster of the video s describes: its first frame as
// a JPEG of the video's size, with a label sized by the longer side and
// one line of the prompt (to read as a thumbnail) and the first frame's
// timecode. It is drawn from
// the scene, not decoded from the video.
func Poster(s Spec) ([]byte, error) {
	s.MimeType = mimeMP4
	if err := checkSize(s); err != nil {
		return nil, err
	}
	if err := checkDuration(s); err != nil {
		return nil, err
	}
	if s.Width%2 != 0 || s.Height%2 != 0 {
		return nil, fmt.Errorf("media: poster of %dx%d pixels: %w: videos have an even width and height", s.Width, s.Height, errBadSize)
	}
	p := newH264Params(s.Width, s.Height, videoFPS)
	sc := newScene(s.Seed, s.Prompt)
	grid := make([]uint8, p.mbW*p.mbH)
	sc.render(grid, p.mbW, p.mbH, s.Width, s.Height, 16, 0, videoFPS, nil)
	img := image.NewPaletted(image.Rect(0, 0, s.Width, s.Height), nil)
	for y := 0; y < s.Height; y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+s.Width]
		cells := grid[(y/16)*p.mbW:]
		for x := range row {
			row[x] = cells[x/16]
		}
	}
	colours := sc.palette
	if !s.Label.empty() {
		// A label larger than the frames' (posters are shown as
		// thumbnails), with the first frame's timecode.
		lay, err := layoutLabel(s.Label, posterLabel, s.Width, s.Height, s.Width, videoLabelInfo(s), timecode(s.DurationSeconds*videoFPS-1, videoFPS), 0)
		if err != nil {
			return nil, err
		}
		lay.drawTimecode(timecode(0, videoFPS), func(int, int) {})
		colours = paintLabel(img, colours, &lay.mask, s.Height-lay.mask.h)
	}
	return encodeStill(img, colours, mimeJPEG)
}

// previewSide is the size of the pictures ModelPreview and Waveform make.
const previewSide = 512

// ModelPreview returns a picture of the 3D model s describes, as a PNG of
// 512x512 pixels: the solid of the GLB, in its base colour, flat shaded
// from a fixed light and seen from a fixed camera (above, in front and to
// the right, orthographic), with the label below it.
func ModelPreview(s Spec) ([]byte, error) {
	r := newRNG(s.Seed, s.Prompt, "model") // the draws of generateGLB, in order
	sol := newSolid(r)
	hue := r.intn(360)
	base := hsv(hue, r.between(120, 230), r.between(150, 255))

	const side = previewSide
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	bg := rgb{34, 38, 48}
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{bg.r, bg.g, bg.b, 255}), image.Point{}, draw.Src)

	// Camera: turn 35 degrees about y, then tilt 25 degrees about x.
	cy, sy := math.Cos(35*math.Pi/180), math.Sin(35*math.Pi/180)
	cx, sx := math.Cos(25*math.Pi/180), math.Sin(25*math.Pi/180)
	view := func(p ivec) [3]float64 {
		x, y, z := float64(p.x)/unit, float64(p.y)/unit, float64(p.z)/unit
		x, z = x*cy+z*sy, -x*sy+z*cy
		y, z = y*cx-z*sx, y*sx+z*cx
		return [3]float64{x, y, z}
	}
	var pts [][3]float64
	extent := 0.0
	for _, c := range sol.corners {
		v := view(c)
		pts = append(pts, v)
		extent = max(extent, math.Abs(v[0]), math.Abs(v[1]))
	}
	// The solid fills the space above the label.
	area := float64(side) * 0.62
	scale := area / 2 / max(extent, 1e-9) * 0.9
	ox, oy := float64(side)/2, area/2+float64(side)*0.04
	light := [3]float64{-0.4, 0.7, 0.6} // towards the light, roughly normalised
	var z vector.Rasterizer
	centre := [3]float64{}
	for _, p := range pts {
		centre[0] += p[0] / float64(len(pts))
		centre[1] += p[1] / float64(len(pts))
		centre[2] += p[2] / float64(len(pts))
	}
	for _, f := range sol.faces {
		a, b, c := pts[f[0]], pts[f[1]], pts[f[2]]
		u := [3]float64{b[0] - a[0], b[1] - a[1], b[2] - a[2]}
		v := [3]float64{c[0] - a[0], c[1] - a[1], c[2] - a[2]}
		n := [3]float64{u[1]*v[2] - u[2]*v[1], u[2]*v[0] - u[0]*v[2], u[0]*v[1] - u[1]*v[0]}
		// Face normals point outwards (away from the centre).
		var mid [3]float64
		for _, i := range f {
			for k := range mid {
				mid[k] += pts[i][k] / float64(len(f))
			}
		}
		if (mid[0]-centre[0])*n[0]+(mid[1]-centre[1])*n[1]+(mid[2]-centre[2])*n[2] < 0 {
			n = [3]float64{-n[0], -n[1], -n[2]}
		}
		if n[2] <= 0 {
			continue // faces away from the camera, which looks along -z
		}
		l := math.Sqrt(n[0]*n[0] + n[1]*n[1] + n[2]*n[2])
		lambert := max(0, (n[0]*light[0]+n[1]*light[1]+n[2]*light[2])/l/1.02)
		k := 0.35 + 0.65*lambert
		shade := color.RGBA{uint8(float64(base.r) * k), uint8(float64(base.g) * k), uint8(float64(base.b) * k), 255}
		// Rasterise within the face's bounding box only.
		box := image.Rectangle{Min: image.Pt(side, side)}
		for _, i := range f {
			x, y := int(ox+pts[i][0]*scale), int(oy-pts[i][1]*scale)
			box = box.Union(image.Rect(x-1, y-1, x+2, y+2))
		}
		box = box.Intersect(img.Bounds())
		if box.Empty() {
			continue
		}
		z.Reset(box.Dx(), box.Dy())
		for j, i := range f {
			x, y := float32(ox+pts[i][0]*scale-float64(box.Min.X)), float32(oy-pts[i][1]*scale-float64(box.Min.Y))
			if j == 0 {
				z.MoveTo(x, y)
			} else {
				z.LineTo(x, y)
			}
		}
		z.ClosePath()
		z.Draw(img, box, image.NewUniform(shade), image.Point{})
	}
	return stillWithLabel(img, s.Label, fmt.Sprintf("3D preview: %s, %d faces", sol.name, len(sol.faces)))
}

// Waveform returns a picture of the sound of a WAV file made by Generate
// (16-bit PCM, mono), as a PNG of 512x512 pixels: the peaks and the level
// (RMS) of each column over a centre line, with the label below.
func Waveform(wav []byte, l Label) ([]byte, error) {
	samples, rate, err := pcmSamples(wav)
	if err != nil {
		return nil, err
	}
	const side = previewSide
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{24, 28, 36, 255}), image.Point{}, draw.Src)
	height := side * 62 / 100
	mid := height/2 + side*2/100
	peakC := color.RGBA{72, 196, 180, 255}
	rmsC := color.RGBA{180, 240, 230, 255}
	for x := 0; x < side; x++ {
		img.SetRGBA(x, mid, color.RGBA{70, 76, 90, 255})
	}
	n := len(samples)
	for x := 0; x < side && n > 0; x++ {
		a, b := x*n/side, max((x+1)*n/side, x*n/side+1)
		lo, hi := 0, 0
		var sq float64
		for _, v := range samples[a:b] {
			lo, hi = min(lo, int(v)), max(hi, int(v))
			sq += float64(v) * float64(v)
		}
		rms := int(math.Sqrt(sq/float64(b-a)) * float64(height/2) / 32768)
		top, bottom := mid-hi*(height/2)/32768, mid-lo*(height/2)/32768
		for y := top; y <= bottom; y++ {
			img.SetRGBA(x, y, peakC)
		}
		for y := mid - rms; y <= mid+rms; y++ {
			img.SetRGBA(x, y, rmsC)
		}
	}
	secs := float64(n) / float64(max(rate, 1))
	return stillWithLabel(img, l, fmt.Sprintf("waveform: %.1f s, %d Hz", secs, rate))
}

// pcmSamples finds the samples of a 16-bit mono PCM WAV file.
func pcmSamples(wav []byte) ([]int16, int, error) {
	if len(wav) < 12 || string(wav[:4]) != "RIFF" || string(wav[8:12]) != "WAVE" {
		return nil, 0, errors.New("media: waveform: not a WAV file")
	}
	rate := 0
	for off := 12; off+8 <= len(wav); {
		id, size := string(wav[off:off+4]), int(binary.LittleEndian.Uint32(wav[off+4:]))
		body := wav[off+8 : min(len(wav), off+8+size)]
		switch id {
		case "fmt ":
			if len(body) < 16 || binary.LittleEndian.Uint16(body) != 1 || binary.LittleEndian.Uint16(body[2:]) != 1 || binary.LittleEndian.Uint16(body[14:]) != 16 {
				return nil, 0, errors.New("media: waveform: want 16-bit mono PCM")
			}
			rate = int(binary.LittleEndian.Uint32(body[4:]))
		case "data":
			out := make([]int16, len(body)/2)
			for i := range out {
				out[i] = int16(binary.LittleEndian.Uint16(body[2*i:]))
			}
			return out, rate, nil
		}
		off += 8 + size + size%2
	}
	return nil, 0, errors.New("media: waveform: no data chunk")
}

// stillWithLabel draws the label (with info as its second line) on a
// preview picture and encodes it as PNG.
func stillWithLabel(img *image.RGBA, l Label, info string) ([]byte, error) {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	if !l.empty() {
		lay, err := layoutLabel(l, stillLabel, w, h, w, info, "", 0)
		if err != nil {
			return nil, err
		}
		top := h - lay.mask.h
		for y := 0; y < lay.mask.h; y++ {
			for x := 0; x < w; x++ {
				c := levelColour(int(lay.mask.pix[y*lay.mask.w+x]))
				img.SetRGBA(x, top+y, color.RGBA{c.r, c.g, c.b, 255})
			}
		}
	}
	var buf bytes.Buffer
	if err := pngEncoder.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("media: encoding a preview: %w", err)
	}
	return buf.Bytes(), nil
}
