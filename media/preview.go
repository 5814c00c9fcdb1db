package media

import (
	"fmt"
	"image"
)

// Poster returns the poster of the video s describes: its first frame as
// a JPEG of the video's size, label and timecode included. It is drawn
// from the scene, not decoded from the video, and shows the same picture.
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
		pc := &picture{p: p}
		v, err := newVideoLabel(s, p, pc)
		if err != nil {
			return nil, err
		}
		v.lay.drawTimecode(timecode(0, videoFPS), func(int, int) {})
		colours = paintLabel(img, colours, &v.lay.mask, v.top*16)
	}
	return encodeStill(img, colours, mimeJPEG)
}
